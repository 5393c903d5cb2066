/** What the snapshot commands' --out may name: checked before their work, not found wrong at its end. */
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { beginsAsSnapshot, isSnapshotName, SNAPSHOT_EXTENSION, SNAPSHOT_MAGIC } from "../files";
import { printableName } from "../printable";
import { ArgumentError } from "./main";
import { SNAPSHOT_DIR, unexpandedTilde } from "./config";

const statOf = (path: string) => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

/** What --out writes, for the messages: a snapshot, unless told otherwise. */
export interface OutFile {
  /** "snapshot", "executable". */
  what: string;
  /** A name for it, given as an example in a folder --out names. */
  example: string;
}

const SNAPSHOT_FILE: OutFile = { what: "snapshot", example: "en.tome" };

/** Whether the file at `path` begins as a snapshot does (beginsAsSnapshot, on its first bytes). */
function holdsSnapshot(path: string): boolean {
  const head = new Uint8Array(SNAPSHOT_MAGIC.length);
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    return readSync(fd, head) === head.length && beginsAsSnapshot(head);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Refuses at once an --out that the command would find wrong only at its end, after its work: empty, "-", a folder,
 * under a file rather than a folder, or one of the files it reads (`reads`: its dumps, its list, its snapshot), which the
 * file written would replace; unless it is written to as it is (not `renamedOver`), a device or a pipe, or a file that
 * is not a snapshot where a snapshot is written.
 */
export function checkOut(out: string, reads: string[], file: OutFile = SNAPSHOT_FILE, renamedOver = true): void {
  if (!out) throw new ArgumentError("--out is empty: name the file to write.");
  // snapshot:export's "-" is standard output; a snapshot is a file read in place, never a stream.
  if (out === "-")
    throw new ArgumentError(
      `--out - would be a file named '-': ${/^[aeiou]/.test(file.what) ? "an" : "a"} ${file.what} cannot go to standard output. Name its file.`,
    );
  // "--out=~/en.tome": the shell turns ~ into the home folder only at a word's start, so the command made a folder
  // named "~" where it runs (Tome's, under bun run) and wrote there (D187).
  if (unexpandedTilde(out))
    throw new ArgumentError(
      `--out ${printableName(out)} starts with "~", which the shell did not turn into a home folder (it does not after "="): write --out ${printableName(out)} with a space, or the full path, or ./${printableName(out)} for a file or folder really named so.`,
    );
  const written = statOf(out);
  if (out.endsWith("/") || written?.isDirectory())
    throw new ArgumentError(
      `--out names a folder (${printableName(out)}): name the ${file.what} file, e.g. --out ${printableName(join(out, file.example))}.`,
    );
  for (let dir = dirname(out); ; dir = dirname(dir)) {
    const stat = statOf(dir);
    if (stat && !stat.isDirectory())
      throw new ArgumentError(
        `--out ${printableName(out)} is under ${printableName(dir)}, which is a file, not a folder: write it elsewhere.`,
      );
    if (stat || dirname(dir) === dir) break;
  }
  const read =
    written &&
    reads.find((r) => {
      const s = statOf(r);
      return s?.ino === written.ino && s?.dev === written.dev;
    });
  if (read !== undefined)
    throw new ArgumentError(
      `--out ${printableName(out)} names a file this command reads${read === out ? "" : ` (${printableName(read)})`}: writing it would replace it. Name another file.`,
    );
  // snapshot:export --out snapshots/en.tome wrote JSON Lines over the snapshot start serves (a running server kept its
  // mapping; the next start found no snapshot). Through a link too: a link is written through.
  if (file !== SNAPSHOT_FILE && written?.isFile() && holdsSnapshot(out))
    throw new ArgumentError(
      `--out ${printableName(out)} is a snapshot: writing the ${file.what} would replace it. Name another file.`,
    );
  if (file !== SNAPSHOT_FILE && isSnapshotName(basename(out)))
    throw new ArgumentError(
      `--out ${printableName(out)} ends in ${SNAPSHOT_EXTENSION}, a snapshot's name: start, mcp and snapshot:export would take the ${file.what} for a snapshot. Name it otherwise, e.g. --out ${printableName(join(dirname(out), file.example))}.`,
    );
  // A typo (--out notes.md) replaced the file with the snapshot; a snapshot, even a damaged one, is rebuilt over.
  if (renamedOver && written?.isFile() && written.size > 0 && file === SNAPSHOT_FILE && !holdsSnapshot(out))
    throw new ArgumentError(
      `--out ${printableName(out)} is a file that is not a ${file.what}: writing the ${file.what} would replace it. Name another file, or remove that one first.`,
    );
  // Written beside it and renamed over it: as root, --out /dev/null made /dev/null a regular file, the snapshot.
  if (renamedOver && written && !written.isFile())
    throw new ArgumentError(
      `--out ${printableName(out)} is ${written.isFIFO() ? "a pipe" : written.isSocket() ? "a socket" : "a device"}, not a file: the ${file.what} is written beside it and renamed over it, which would replace it. Name a file.`,
    );
  if (file === SNAPSHOT_FILE) checkServedName(out);
}

/**
 * Refuses a snapshot's --out in the folder start serves from (snapshots/, D86) under a name it does not serve: start,
 * mcp and snapshot:export read only `*.tome` there, and not a dot file, so `--out snapshots/en` was built, then left
 * unread, and start built and served the sample beside it.
 */
function checkServedName(out: string): void {
  const name = basename(out);
  if (resolve(dirname(out)) !== resolve(SNAPSHOT_DIR)) return;
  if (isSnapshotName(name)) return;
  // en → en.tome, .en.tome → en.tome, en.tome.new → en.tome.
  const bare = name.replace(/^\.+/, "").split(SNAPSHOT_EXTENSION)[0] || "en";
  const served = `${bare}${SNAPSHOT_EXTENSION}`;
  throw new ArgumentError(
    `--out ${printableName(out)} is in ${SNAPSHOT_DIR}/, where start serves only files named *${SNAPSHOT_EXTENSION} not starting with ".": this one would never be served. Name it e.g. --out ${printableName(join(dirname(out), served))}, or write it outside ${SNAPSHOT_DIR}/.`,
  );
}

/**
 * What a command stopped before its end says of its output `out`, asked at its start: one already there is untouched
 * (it is replaced only when the new one is whole), and "was not written" would sound as if it were lost.
 */
export function stoppedOutput(out: string): string {
  const shown = printableName(out);
  return existsSync(out) ? `${shown} is as it was (nothing was written over it)` : `${shown} was not written`;
}
