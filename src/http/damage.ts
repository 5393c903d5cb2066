/**
 * Damage in the snapshot served, met by a request (what open() does not check, D119, D163: a text block's zstd frame, a
 * chunk's end, a postings block, a title's page). The client gets D1's 500 internal_error, as for any fault of ours;
 * the server's log says once a snapshot which file and what to run (`snapshot:verify`), not a stack trace a request.
 * A read of a snapshot let go (written over in place, D84) is no damage: it is reported as before.
 */
import type { Engine } from "../search";
import { damagedSections, SnapshotError } from "../snapshot";

/** A fault's reporter for one snapshot served: a SnapshotError from its file said once in a line, anything else to `logError`. */
export function damageReporter(
  engine: Engine,
  logError: (error: unknown, request: Request | undefined) => void,
  notice: (line: string) => void,
): (error: unknown, request: Request | undefined) => void {
  let said = false;
  return (error, request) => {
    if (!(error instanceof SnapshotError) || !engine.snapshot.container.readable) return logError(error, request);
    if (said) return;
    said = true;
    const path = engine.snapshot.path;
    // The engine's own SnapshotErrors name the file and snapshot:verify (damagedSections); a text block's do not.
    const what = error.message.includes(path)
      ? error.message
      : damagedSections(path, error.message.replace(/\.$/, "")).message;
    notice(
      `serve: a request met damage in the snapshot served: ${what} Requests that read the damage are answered 500 internal_error meanwhile (said once for this snapshot).`,
    );
  };
}
