/**
 * The credits spent since usage.json was last saved, one line each, appended before the answer leaves (D20: usage
 * survives a `kill -9`; D130's save every 100 ms alone lost the last 100 ms). The journal comes in generations,
 * `usage.json.journal.N`: usage.json says the first generation its counts do not hold (`journal`), a save starts the
 * next one, and the generations before a save's are removed once it has landed. A reader adds the lines of every
 * generation from usage.json's on.
 */
import { close, openSync, readdirSync, writeSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { DATA_FILE_LIMIT, readWholeText } from "../files";
import { nameTable } from "./names";

const journalPath = (usagePath: string, generation: number) => `${usagePath}.journal.${generation}`;

/** The journal generations among a folder's names, in order. */
function generations(usagePath: string, names: string[]): number[] {
  const prefix = `${basename(usagePath)}.journal.`;
  return names
    .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .map((n) => Number(n.slice(prefix.length)))
    .sort((a, b) => a - b);
}

/** The journal generations beside usage.json, in order (none where its folder cannot be read). */
function generationsBeside(usagePath: string): number[] {
  try {
    return generations(usagePath, readdirSync(dirname(usagePath)));
  } catch {
    return [];
  }
}

/** The journal files beside usage.json, oldest first. */
export const journalFiles = (usagePath: string): string[] =>
  generationsBeside(usagePath).map((g) => journalPath(usagePath, g));

/** The counters a journal's lines add to (usage.ts's UsageData). */
interface Counters {
  months: Record<string, Record<string, number>>;
  key_days?: Record<string, Record<string, [number, number]>>;
}

/**
 * Adds to the counters (each month's account, each day's key) the lines of every generation from `from` on;
 * `fail(path, why)` is the error a damaged one (at `path`) throws. Returns the generation to append to next (after
 * every one found), or undefined when one was removed while read: a save holding it landed since usage.json was read,
 * which must then be read again.
 */
export function replayJournals(
  usagePath: string,
  from: number,
  counters: Counters,
  fail: (path: string, why: string) => Error,
): number | undefined {
  let next = from;
  for (const generation of generationsBeside(usagePath)) {
    if (generation < from) continue; // a save that landed holds it; its removal was cut short
    next = generation + 1;
    const path = journalPath(usagePath, generation);
    let read: ReturnType<typeof readWholeText>;
    try {
      read = readWholeText(path, DATA_FILE_LIMIT);
    } catch (err) {
      // Removed since the folder was read (a reader beside a running server): a save holding it has landed.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw fail(path, `it cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!("text" in read)) throw fail(path, `it is ${"not" in read ? read.not : read.size}`);
    const lines = read.text.split("\n");
    // The last line is empty, or one a kill cut short: its answer was never sent (the line is written before it).
    lines.pop();
    for (const [i, line] of lines.entries()) {
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        entry = undefined;
      }
      const [month, account, credits, keyId, day] = Array.isArray(entry) && entry.length === 5 ? entry : [];
      if (
        typeof month !== "string" ||
        !/^\d{4}-\d{2}$/.test(month) ||
        typeof account !== "string" ||
        !Number.isSafeInteger(credits) ||
        credits <= 0 ||
        typeof keyId !== "string" ||
        typeof day !== "string" ||
        !/^\d{4}-\d{2}-\d{2}$/.test(day)
      )
        throw fail(path, `line ${i + 1} is not a spending`);
      const spentIn = (counters.months[month] ??= nameTable());
      spentIn[account] = (spentIn[account] ?? 0) + credits;
      const keys = ((counters.key_days ??= nameTable())[day] ??= nameTable());
      (keys[keyId] ??= [0, 0])[1] += credits;
    }
  }
  return next;
}

/** Removes the generations before `generation` (a save holding their counts has landed), off the calling thread. */
export async function dropJournalsBefore(usagePath: string, generation: number): Promise<void> {
  for (const g of generations(usagePath, await readdir(dirname(usagePath))))
    if (g < generation) await rm(journalPath(usagePath, g), { force: true });
}

/** The generation a server appends to: opened at its first spending. */
export class UsageJournal {
  private fd: number | undefined;

  constructor(
    private readonly usagePath: string,
    /** The generation appended to now (usage.json's counts hold every one before it). */
    public generation: number,
  ) {}

  /** One spending (a key's, on a day), on disk (the kernel's: a killed process loses nothing written) before this returns; throws when it cannot be. */
  append(month: string, account: string, credits: number, keyId: string, day: string): void {
    this.fd ??= openSync(journalPath(this.usagePath, this.generation), "a", 0o600);
    const line = `${JSON.stringify([month, account, credits, keyId, day])}\n`;
    // A short write (a full disk) leaves a line cut short, which a reader takes for one a kill cut: said as a failure.
    if (writeSync(this.fd, line) !== Buffer.byteLength(line)) throw new Error("the disk took only part of a line");
  }

  /** Starts the next generation, for the spendings after a save's text is made: its number. */
  next(): number {
    this.close();
    return ++this.generation;
  }

  /** Closed off this thread: a file just written much to can take a millisecond to close (bench/http/usage-save.ts). */
  close(): void {
    if (this.fd !== undefined) close(this.fd, () => {});
    this.fd = undefined;
  }
}
