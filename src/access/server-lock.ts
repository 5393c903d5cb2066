/**
 * One server per data folder (without Redis): its usage counts live in that server's memory and
 * are written over usage.json whole, so a second server on the same folder would overwrite the
 * first's counts with its own (each believes it holds them all) and quotas would be under-counted.
 * The first takes TOME_DATA/server.lock (its process id and start time); another finds it held and
 * is refused, told what to do. A lock left by a process that is gone, or whose id another process
 * now has (its start time differs: ids are reused, in containers soon), is taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors";

export class DataFolderTaken extends UserError {}

/** A process's start time in clock ticks since boot (Linux), or "" where /proc cannot tell. */
function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command may hold spaces and parentheses: the fields are counted after its last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** Whether the lock's writer is still that process. */
function heldBy(text: string): number | undefined {
  const [pidText = "", started = ""] = text.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return undefined;
  }
  return !started || startTime(pid) === started ? pid : undefined;
}

/** Takes `dataDir`'s server lock: a function that lets it go. Throws DataFolderTaken while another server holds it. */
export function lockDataFolder(dataDir: string): () => void {
  const path = join(dataDir, "server.lock");
  const mine = `${process.pid} ${startTime(process.pid)}`;
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new UserError(
          `cannot write to the data folder ${dataDir} (${(err as Error).message}): the server keeps its usage counts there. Make it writable by this user, or set TOME_DATA to a folder that is.`,
        );
      }
      let text = "";
      try {
        text = readFileSync(path, "utf8");
      } catch {}
      const holder = heldBy(text);
      if (holder === process.pid) return () => {};
      if (holder !== undefined || attempt > 2) {
        throw new DataFolderTaken(
          `another Tome server (process ${holder ?? "?"}) uses the data folder ${dataDir}: two servers on one folder would each write over the other's usage counts. ` +
            `Give this one a TOME_DATA of its own, or run replicas with TOME_REDIS_URL (README, "Running replicas"). If no server is running, delete ${path}.`,
        );
      }
      rmSync(path, { force: true });
      continue;
    }
    try {
      writeSync(fd, `${mine}\n`);
    } finally {
      closeSync(fd);
    }
    return () => {
      try {
        if (readFileSync(path, "utf8").trim() === mine) rmSync(path, { force: true });
      } catch {}
    };
  }
}
