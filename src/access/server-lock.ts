/**
 * One server per data folder (without Redis): its usage counts live in that server's memory and
 * are written over usage.json whole, so a second server on the same folder would overwrite the
 * first's counts with its own (each believes it holds them all) and quotas would be under-counted.
 * The first takes TOME_DATA/server.lock (src/files.ts takeLock: its process id, start time and pid space, its mtime
 * renewed while held); another finds it held and is refused, told what to do. A lock left by a process that is gone, or
 * whose id another process now has (its start time differs: ids are reused, in containers soon), is taken over; one of
 * another container or machine once it has not been renewed for 30 s (D175).
 */
import { join } from "node:path";
import { UserError, wholeFileSystemRefused } from "../errors";
import { LOCK_FREES_ITSELF, LOCK_STALE_MS, lockHeld, lockHolderShown, takeLock } from "../files";
import { printableName } from "../printable";

const LOCK_STALE_S = LOCK_STALE_MS / 1000;

export class DataFolderTaken extends UserError {}

/**
 * Takes `dataDir`'s server lock: a function that lets it go. Throws DataFolderTaken while another server holds it, or
 * `taken`'s error for a command that is no server (keys import). `log` is told if the lock is lost while held.
 */
export function lockDataFolder(
  dataDir: string,
  taken?: (pid: number, elsewhere: boolean) => Error,
  log?: (line: string) => void,
  /** Told when the lock is lost while held, cannot be made again once deleted, or is made again (for /healthz, D190). */
  told: { lost?: () => void; unmade?: (err: Error) => void; remade?: () => void } = {},
): () => void {
  const path = join(dataDir, "server.lock");
  return takeLock(path, {
    lost: () => {
      told.lost?.();
      log?.(
        `${printableName(path)} is no longer this server's (taken by another process, after it was deleted or this one stood still over 30 s): another server may now write over this one's usage counts. Stop one of them.`,
      );
    },
    unmade: (err) => {
      told.unmade?.(err);
      log?.(
        `${printableName(path)} was deleted while this server runs and cannot be made again (${err.message}): until it is, a second server started on this data folder would be let in, and write over this one's usage counts. Tried again every few seconds.`,
      );
    },
    remade: () => {
      told.remade?.();
      log?.(
        `${printableName(path)} was deleted while this server runs: made again. It keeps a second server off this data folder (two would write over each other's usage counts); it goes when this server stops.`,
      );
    },
    held: (pid, elsewhere) => taken?.(pid, elsewhere) ?? folderTaken(dataDir, pid, elsewhere),
    // A full disk or a read-only file system is said as every command says it (D184: "the disk is full: free space
    // there…"); "make it writable by this user" told a full disk's operator to change permissions (D190).
    unwritable: (err) =>
      wholeFileSystemRefused(err)
        ? err
        : // A socket, a device, a pipe or a folder where the lock goes (D190): no permission makes it one, so "make it
          // writable by this user" sent the operator to chmod. What it is and to remove it, as the key tool says it.
          (err as NodeJS.ErrnoException).code === "EFTYPE"
          ? new UserError(
              `${err.message}, or set TOME_DATA to another folder. The server makes ${printableName(path)} itself, to keep a second server off the data folder ${printableName(dataDir)}/ (two would write over each other's usage counts).`,
            )
          : new UserError(
              `cannot write to the data folder ${printableName(dataDir)}/ (${err.message}): the server keeps its usage counts there. Make it writable by this user, or set TOME_DATA to a folder that is.`,
            ),
  });
}

/** The refusal lockDataFolder would throw now, looked for without taking the lock or writing in the folder: none while it is free. */
export function dataFolderHeld(dataDir: string): DataFolderTaken | undefined {
  const path = join(dataDir, "server.lock");
  const holder = lockHeld(path);
  if (!holder) return undefined;
  // One look only: a lock of another container or machine found not renewed lately is unconfirmed (lockJudged), most
  // often its server gone. Said as what it may be, not as a live server's ("do not delete": it frees itself anyway).
  if (holder.unconfirmed)
    return new DataFolderTaken(
      `the data folder ${printableName(dataDir)}/ has a ${printableName(path)} of a server ${lockHolderShown(holder.pid, true)} not renewed for ${LOCK_STALE_S} s: that server has most likely stopped, and its lock is taken over once no renewal comes in the next few seconds. If it still runs (its clock stepped), give this one a TOME_DATA of its own.`,
    );
  return folderTaken(dataDir, holder.pid, holder.elsewhere);
}

function folderTaken(dataDir: string, pid: number, elsewhere: boolean): DataFolderTaken {
  const path = join(dataDir, "server.lock");
  return new DataFolderTaken(
    `another Tome server ${lockHolderShown(pid, elsewhere)} uses the data folder ${printableName(dataDir)}/: two servers on one folder would each write over the other's usage counts. ` +
      `Give this one a TOME_DATA of its own, or run replicas with TOME_REDIS_URL (README, "Running replicas"). ` +
      (elsewhere
        ? `Do not delete ${printableName(path)}: ${LOCK_FREES_ITSELF}.`
        : `If no server is running, delete ${printableName(path)}.`),
  );
}
