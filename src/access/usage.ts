/**
 * Usage: credits spent per account per UTC month (D20), and when each key was last used.
 * Counted in memory, saved to TOME_DATA/usage.json at most 100 ms after a change, by an
 * atomic rename, which never leaves a broken file. Each credit spent is first appended to a journal
 * (usage-journal.ts) before its answer leaves: a `kill -9` loses no credit (D20); the keys' last uses
 * and daily counts (the dashboard's) since the last save it may. The file's text is made on the request thread, at once; its
 * writing and renaming are not (D130): they block for milliseconds on a busy file system.
 * The file carries a checksum; a damaged one is refused with a clear message, never silently reset.
 */
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { UserError } from "../errors";
import {
  atomicWrite,
  atomicWriteAsync,
  clearDeadWrites,
  DATA_FILE_LIMIT,
  leadsNowhere,
  linkToNothing,
  readWholeText,
} from "../files";
import { nameTable } from "./names";
import { dropJournalsBefore, replayJournals, UsageJournal } from "./usage-journal";
import { printableName } from "../printable";

export const FLUSH_INTERVAL_MS = 100;

/** Every level keyed by names from outside (accounts, key ids) is a nameTable (names.ts), never a plain object. */
export interface UsageData {
  /** "YYYY-MM" → account → credits spent. */
  months: Record<string, Record<string, number>>;
  /** key id → ISO 8601 time of its last request. */
  last_used: Record<string, string>;
  /** "YYYY-MM-DD" → key id → [requests, credits] that UTC day (for the dashboard); this month and the last only. Absent in files written before it. */
  key_days?: KeyDays;
  /** The first journal generation these counts do not hold (usage-journal.ts); absent in files written before it (0). */
  journal?: number;
}

/** "YYYY-MM-DD" → key id → [requests made with the key, credits it spent] that UTC day. */
export type KeyDays = Record<string, Record<string, [requests: number, credits: number]>>;

/** "YYYY-MM-DD" of a UTC time. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

interface UsageFile extends UsageData {
  format: "tome-usage";
  version: 1;
  /** sha256 of JSON.stringify({months, last_used}), with key_days after them when there are any. */
  checksum: string;
}

/** A damaged usage.json, said for the person at the terminal. */
export class UsageFileError extends UserError {}

/** Counts a stopping server could not save. */
export class UsageNotSaved extends UserError {}

/** The longest wait between saves that fail (a full disk): each failure doubles it from FLUSH_INTERVAL_MS. */
const SAVE_RETRY_MAX_MS = 30_000;

export function usagePath(dataDir: string): string {
  return join(dataDir, "usage.json");
}

/** "YYYY-MM" of a UTC time. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** Unix seconds of 00:00:00 UTC on the 1st of the month. */
export function monthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
}

/** Unix seconds of 00:00:00 UTC on the 1st of the next month. */
export function monthEnd(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

/** A UTC month: its name ("YYYY-MM"), its start and end (Unix seconds), and its end as X-Quota-Reset sends it. */
export interface UtcMonth {
  name: string;
  start: number;
  end: number;
  endText: string;
}

/** How far back a clock may step over the 1st and stay in the month entered (MonthReached): an NTP step's size. */
const MONTH_HELD_BACK_MS = 3_600_000;

/**
 * How far the wall clock's advance may differ from the monotonic clock's between two readings for a month's entry to be
 * the clock running into it, not a step. NTP's slewing moves both alike (Linux slews the monotonic clock with the wall
 * clock); what this tolerates is a short suspend, through which the wall clock runs and the monotonic clock stops.
 */
const STEP_TOLERANCE_MS = 60_000;

/** The UTC month `now` is in. */
function utcMonthOf(now: number): UtcMonth {
  const end = monthEnd(now);
  return { name: monthOf(now), start: monthStart(now), end, endText: String(end) };
}

/**
 * The month a server counts usage in, at each reading of its wall clock (`at`): now's, except that a month the server
 * entered while running, its wall clock advancing over the 1st as its monotonic clock did, is held when the clock steps
 * back over the 1st by less than MONTH_HELD_BACK_MS (NTP correcting it), so that a month's quota is reset once and a
 * month ended takes no more spending (D20). A month found at the first reading, or entered by a step, is not held: a
 * clock that was ahead (a hardware clock in local time, a VM resumed) and is set right is followed. In memory only: a
 * restart inside the window, or a replica whose clock is behind, goes back (D20, D200). One for Access and RedisAccess.
 */
export class MonthReached {
  private month: UtcMonth | undefined;
  /** Whether `month` was entered while running, not by a step: held against a step back. */
  private entered = false;
  /** The last reading: the wall clock's and the monotonic clock's. */
  private last = { wall: 0, mono: 0 };

  /** `monotonic`: performance.now() but in tests, which move it with the wall clock where the clock runs, not where it steps. */
  constructor(private readonly monotonic: () => number = () => performance.now()) {}

  at(now: number): UtcMonth {
    const mono = this.monotonic();
    const last = this.last;
    this.last = { wall: now, mono };
    const m = this.month;
    if (
      m &&
      now < m.end * 1000 &&
      (now >= m.start * 1000 || (this.entered && now >= m.start * 1000 - MONTH_HELD_BACK_MS))
    )
      return m;
    this.entered =
      m !== undefined && now >= m.end * 1000 && Math.abs(now - last.wall - (mono - last.mono)) <= STEP_TOLERANCE_MS;
    return (this.month = utcMonthOf(now));
  }

  /** The time usage is counted at for a time of `now` (Gate.usageTime): now, or the first instant of the month held. */
  usageTime(now: number): number {
    return countedAt(this.at(now), now);
  }
}

/**
 * The time usage is counted at for a time of `now` in `month` (MonthReached.at's, read at `now`): now, or, a clock
 * stepped back over the 1st, the first instant of the month held, so that a request counts on a day of the month charged.
 */
export function countedAt(month: UtcMonth, now: number): number {
  return Math.max(now, month.start * 1000);
}

/**
 * `now`, or, when it is outside `month` (its start and end in Unix seconds, carried by its hold), the month's nearest
 * instant: the time a request held in one month and answered in another (across 00:00 UTC on the 1st, or a clock
 * stepped back over it) is charged at, so that its credits count on a day of the month whose quota held them, and the
 * dashboard's keys add up to the account's (D20).
 */
export function withinMonth(month: { start: number; end: number }, now: number): number {
  if (now < month.start * 1000) return month.start * 1000;
  return now < month.end * 1000 ? now : month.end * 1000 - 1;
}

/** The JSON text the checksum is of: the counters, in the file's order. */
const countersText = (data: UsageData) =>
  JSON.stringify({
    months: data.months,
    last_used: data.last_used,
    ...(data.key_days ? { key_days: data.key_days } : {}),
    ...(data.journal ? { journal: data.journal } : {}),
  });

const checksum = (data: UsageData) => sha256(countersText(data));
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** A JSON object (not null, not an array): what each level of the counters is. */
const isTable = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** Reads and verifies usage.json and adds its journal's credits (D20); a missing file is no usage yet. */
export function readUsage(path: string): UsageData {
  const fail = (why: string) =>
    new UsageFileError(
      `${printableName(path)} is damaged (${why}), so this month's usage is unknown. Restore it from a backup; or, to start counting from zero (every account's usage this month is lost), move it away with its ${basename(path)}.journal.* files.`,
    );
  // A journal's damage is its own (moving usage.json away leaves it read): named, with what to do about it.
  const failJournal = (journal: string, why: string) =>
    new UsageFileError(
      `${printableName(journal)} is damaged (${why}), so this month's usage is unknown: it holds credits spent since ${basename(path)} was last saved. Restore it with ${basename(path)} from a backup; or ${why.startsWith("line ") ? "delete that line (its credits are not counted), or " : ""}move the file away (none of its credits are counted).`,
    );
  // A reader beside a running server: a save landing meanwhile (usage.json renamed over) removes the generations it
  // holds, which the usage.json read may not: read both again.
  for (let attempt = 1; attempt <= 5; attempt++) {
    const before = identityAt(path);
    const data = readSaved(path, fail);
    const next = replayJournals(path, data.journal ?? 0, data, failJournal);
    if (next === undefined || identityAt(path) !== before) continue;
    if (next) data.journal = next;
    return data;
  }
  throw new UsageFileError(
    `${printableName(path)} and its journal changed each time they were read (a server saving beside this command): run it again; nothing was changed.`,
  );
}

/** usage.json as saved (its journal: the first generation it does not hold). */
function readSaved(path: string, fail: (why: string) => UsageFileError): UsageData {
  let read: ReturnType<typeof readWholeText>;
  try {
    read = readWholeText(path, DATA_FILE_LIMIT);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      // A link to a volume not mounted is no usage yet only in appearance: counting from zero there (or on the disk
      // below its mount point) would forget every credit spent this month.
      const target = linkToNothing(path);
      if (target !== undefined)
        throw new UsageFileError(
          `${leadsNowhere(path, target)}, so this month's usage is unknown. Mount what it leads to (or restore the file there) and start again; nothing was changed.`,
        );
      return { months: nameTable(), last_used: nameTable() };
    }
    throw new UsageFileError(
      `${printableName(path)} cannot be read (${code ?? (err as Error).message}), so this month's usage is unknown. Make it a file this user can read; nothing was changed.`,
    );
  }
  // A device, a pipe or a file of gigabytes was read to its end, however long: start hung, eating memory (D190).
  if ("not" in read) throw fail(`it is ${read.not}, not a file`);
  if ("size" in read) throw fail(`it is ${read.size}`);
  let file: UsageFile;
  try {
    file = JSON.parse(read.text);
  } catch (err) {
    throw fail(`not valid JSON: ${(err as Error).message}`);
  }
  if (!file || typeof file !== "object" || file.format !== "tome-usage") throw fail("not a Tome usage file");
  if (file.version !== 1) throw fail(`version ${String(file.version)} is not one this Tome reads`);
  if (!isTable(file.months) || !isTable(file.last_used)) throw fail("counters missing");
  for (const [month, accounts] of Object.entries(file.months)) {
    if (!/^\d{4}-\d{2}$/.test(month)) throw fail(`bad month ${month}`);
    // A month edited to null (to reset it) was a TypeError with its stack, at start and in keys list.
    if (!isTable(accounts)) throw fail(`bad counters in ${month}`);
    for (const n of Object.values(accounts))
      if (!Number.isSafeInteger(n) || n < 0) throw fail(`bad counter in ${month}`);
  }
  if (Object.values(file.last_used).some((t) => typeof t !== "string")) throw fail("bad last use");
  if (file.key_days !== undefined) {
    if (!isTable(file.key_days)) throw fail("per-key counters damaged");
    for (const [day, keys] of Object.entries(file.key_days)) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !isTable(keys)) throw fail(`bad day ${day}`);
      for (const use of Object.values(keys))
        if (!Array.isArray(use) || use.length !== 2 || !use.every((n) => Number.isSafeInteger(n) && n >= 0))
          throw fail(`bad counter on ${day}`);
    }
  }
  if (file.journal !== undefined && (!Number.isSafeInteger(file.journal) || file.journal < 1))
    throw fail("bad journal generation");
  if (file.checksum !== checksum(file)) throw fail("checksum mismatch");
  // JSON.parse makes every name an own key, "__proto__" too; the tables keep them so.
  const tables = <T>(outer: Record<string, Record<string, T>>) =>
    nameTable(Object.entries(outer).map(([name, inner]) => [name, nameTable(Object.entries(inner))] as const));
  return {
    months: tables(file.months),
    last_used: nameTable(Object.entries(file.last_used)),
    ...(file.key_days ? { key_days: tables(file.key_days) } : {}),
    ...(file.journal ? { journal: file.journal } : {}),
  };
}

/** usage.json's text for these counts, checksum and all. */
function usageText(data: UsageData): string {
  // JSON.stringify of the UsageFile, from the counters' text the checksum needs anyway: the counters are written once.
  const counters = countersText(data);
  return `{"format":"tome-usage","version":1,${counters.slice(1, -1)},"checksum":"${sha256(counters)}"}`;
}

/** Writes usage.json at once (the key tool's; the server's ledger saves without blocking its thread). */
export function writeUsage(path: string, data: UsageData): void {
  // Not fsynced: a killed process loses nothing the kernel has; only a power cut could.
  atomicWrite(path, usageText(data), { mode: 0o600, durable: false });
}

/** The second whose ISO 8601 text was made last ("2026-11-29T14:07:01."), and its start: the keys saved together were mostly last used in the same one. */
let isoSecond = { start: Number.NaN, text: "" };

/** new Date(ms).toISOString(), a fraction of its cost (a save may write a thousand keys' last uses, on the request thread). */
export function isoTime(ms: number): string {
  const start = ms - (((ms % 1000) + 1000) % 1000);
  if (start !== isoSecond.start) isoSecond = { start, text: new Date(start).toISOString().slice(0, 20) };
  const frac = ms - start;
  return `${isoSecond.text}${frac < 10 ? "00" : frac < 100 ? "0" : ""}${frac}Z`;
}

/** Which version of a file this is (its inode, size and mtime: a rename over it changes the first, an edit in place the others), or "none". */
const fileIdentity = (s: { ino: number; size: number; mtimeMs: number } | undefined): string =>
  s ? `${s.ino}:${s.size}:${s.mtimeMs}` : "none";

/** The identity of the file at `path` now (fileIdentity), "none" where there is none. */
const identityAt = (path: string): string => fileIdentity(statSync(path, { throwIfNoEntry: false }));

/** How the ledger puts a save's text on disk: resolves once the file holds it (a test may slow or fail it). */
export type UsageWriter = (path: string, text: string) => Promise<void>;

const writeUsageText: UsageWriter = (path, text) => atomicWriteAsync(path, text, 0o600);

/** An account's claim on one month's quota: the credits that its requests in flight hold. */
export interface Meter {
  readonly account: string;
  readonly month: string;
  /** The month's start and end (Unix seconds), for withinMonth: worked out once a meter, not at each settlement. */
  readonly start: number;
  readonly end: number;
  held: number;
}

/** The server's usage: spent credits (saved) and credits held by requests in flight (not saved). */
export class UsageLedger {
  private readonly data: UsageData;
  /** account → its meter for the latest month it made a request in. */
  private readonly meters = new Map<string, Meter>();
  /** key id → ms of its last request, not yet written into data.last_used. */
  private readonly lastUsed = new Map<string, number>();
  private dirty = false;
  /** The UTC day requests are counted in now (ms bounds), and its counters in data.key_days (also by key in a Map: faster to find than in the object). */
  private day = {
    name: "",
    start: 0,
    end: 0,
    keys: nameTable<[number, number]>(),
    byKey: new Map<string, [number, number]>(),
  };
  private lastFlush = performance.now();
  private started = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The save under way: one at a time (they share a temporary file, and a later one must land last). */
  private saving: Promise<void> | undefined;
  /** Credits counted and not yet on disk, and the saves that failed in a row (each waits longer, and says so less). */
  private unsavedCredits = 0;
  /** Of those, the credits the journal could not take (a full disk): the ones a stop or kill loses. */
  private unjournaledCredits = 0;
  private failedSaves = 0;
  private lastFailure = "";
  /** usage.json as this ledger last read or wrote it (fileIdentity): another change to it is said, and saved over (D190). */
  private onDisk: string;
  /** When the saves failing now began to fail (Date.now()), for /healthz; undefined while they land. */
  private failingSince: number | undefined;
  /** Where each credit spent is written before its answer leaves (D20), and since when that fails (a full disk). */
  private readonly journal: UsageJournal;
  private journalFailingSince: number | undefined;
  /** An append failed: none is tried again before the next save, which starts a new generation. */
  private journalPaused = false;

  constructor(
    private readonly path: string,
    private readonly write: UsageWriter = writeUsageText,
    /** Where a failed save and the first save after it are said (the server's log). */
    private readonly log: (line: string) => void = console.error,
  ) {
    this.data = readUsage(path);
    this.journal = new UsageJournal(path, this.data.journal ?? 0);
    this.onDisk = identityAt(path);
  }

  /**
   * Whether usage.json is no longer what this ledger last read or wrote: edited by hand, replaced, damaged or removed
   * while the server runs. Said once a change; the counts this server holds are then saved over it (D190): it is this
   * server's while it holds the data folder (server.lock), and a stop left a damaged one to refuse the next start.
   */
  private changedOnDisk(): boolean {
    // On this thread: one stat, microseconds (D130 took the write and the rename off it, milliseconds), and the writer
    // is started in this turn, as D130 has it.
    const found = identityAt(this.path);
    if (found === this.onDisk) return false;
    this.onDisk = found;
    this.log(
      `${printableName(this.path)} was changed or removed while this server runs (by hand, or by another program): it holds this server's counts, saved over it now. To change it, stop the server first.`,
    );
    return true;
  }

  /**
   * From now on a change is saved within FLUSH_INTERVAL_MS, by a timer if no later change saves it first. The temporary
   * files of saves whose process was killed before their rename (a server's kill -9, a cut-short export) go now.
   */
  start(): void {
    // Once at the start, not at each save (a folder read every 100 ms); a live process's is left (clearDeadWrites).
    clearDeadWrites(this.path);
    this.started = true;
    if (this.dirty) this.schedule();
  }

  /** Saves the counts held (none, for a usage.json found missing) soon, as after a change: the file is made now. */
  saveSoon(): void {
    this.dirty = true;
    this.schedule();
  }

  /** Saves the last counts: resolves once they are on disk; throws UsageNotSaved, saying what is lost, when they cannot be. */
  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    // Changed under it with no count since (a hand edit, a truncation): the counts held are written back.
    if (!this.dirty && this.changedOnDisk()) {
      this.dirty = true;
      await this.flush();
    }
    this.journal.close();
    if (!this.dirty) return;
    // The credits the journal took are not lost: the next start adds them (D20).
    if (this.unjournaledCredits)
      throw new UsageNotSaved(
        `${this.unjournaledCredits} credit(s) spent, and the requests counted, since the last save could not be saved to ${printableName(this.path)} (${this.lastFailure}) nor written to its journal: they are lost. Free space or make the folder writable before the next start.`,
      );
    throw new UsageNotSaved(
      `the requests counted and the keys' last uses since the last save could not be saved to ${printableName(this.path)} (${this.lastFailure}): they are lost; the ${this.unsavedCredits} credit(s) spent since are in its journal (${basename(this.path)}.journal.N), which the next start adds: keep those files. Free space or make the folder writable before the next start.`,
    );
  }

  /**
   * Saves the counts as they are now: their text is made before this returns, and written off
   * this thread; resolves once the file holds them (after the save under way, if any).
   */
  async flush(): Promise<void> {
    while (this.saving) await this.saving;
    if (!this.dirty) return;
    this.dirty = false;
    for (const [id, ms] of this.lastUsed) this.data.last_used[id] = isoTime(ms);
    this.lastUsed.clear();
    // The spendings from now on go to the next generation: this text holds every one before.
    const journal = (this.data.journal = this.journal.next());
    this.journalPaused = false;
    const text = usageText(this.data);
    const credits = this.unsavedCredits;
    const unjournaled = this.unjournaledCredits;
    this.unsavedCredits = 0;
    this.unjournaledCredits = 0;
    // When its writing starts: the next is at least FLUSH_INTERVAL_MS later, however long each text took to make.
    this.lastFlush = performance.now();
    this.changedOnDisk();
    const saving = this.write(this.path, text)
      .then(async () => {
        this.onDisk = fileIdentity(await stat(this.path).catch(() => undefined));
        // A removal cut short is no loss: a reader skips the generations before usage.json's.
        await dropJournalsBefore(this.path, journal).catch(() => {});
        if (this.failedSaves)
          this.log(`usage saved to ${printableName(this.path)} again, after ${this.failedSaves} failed save(s).`);
        this.failedSaves = 0;
        this.failingSince = undefined;
        // Every credit counted is on disk again, whatever the journal's state (the next append tells).
        this.journalFailingSince = undefined;
      })
      .catch((err: Error) => {
        // The counts stay in memory, all of them: the next save writes them.
        this.dirty = true;
        this.unsavedCredits += credits;
        this.unjournaledCredits += unjournaled;
        this.lastFailure = err.message;
        this.failingSince ??= Date.now();
        // Said at the first failure, then at every tenth: a full disk must not fill the log too.
        if (this.failedSaves++ % 10 === 0)
          this.log(
            `cannot save usage to ${printableName(this.path)}: ${err.message} (${this.failedSaves} failed save(s); the counts are kept in memory and saved when it can be written).`,
          );
      });
    this.saving = saving;
    await saving;
    this.saving = undefined;
    // Changes made while it was written: saved when due, as any.
    if (this.dirty) this.schedule(Math.max(0, this.lastFlush + this.interval - performance.now()));
  }

  /**
   * While saves fail (a full disk, a read-only folder, usage.json made a directory): what /healthz says, since the
   * counts then live in memory alone (D190), without the file's path. Undefined once a save lands.
   */
  get problem(): string | undefined {
    if (this.failingSince === undefined)
      return this.journalFailingSince === undefined
        ? undefined
        : `usage's journal cannot be written since ${new Date(this.journalFailingSince).toISOString()}: a credit spent since the last save is lost if the server is killed (the server's log says why)`;
    // No path and no system message: /healthz answers anyone (the log names both).
    const since = new Date(this.failingSince).toISOString();
    if (this.journalFailingSince === undefined && this.unjournaledCredits === 0)
      return `usage cannot be saved since ${since}: the credits spent since are in its journal, but the requests counted (the dashboard's) are in memory only, and lost if the server stops before it can save them (the server's log says why)`;
    return `usage cannot be saved since ${since}: the credits spent since are counted in memory only, and lost if the server stops before it can save them (the server's log says why)`;
  }

  /** Between saves: FLUSH_INTERVAL_MS, doubled by each save that failed in a row, up to SAVE_RETRY_MAX_MS. */
  private get interval(): number {
    return Math.min(SAVE_RETRY_MAX_MS, FLUSH_INTERVAL_MS * 2 ** this.failedSaves);
  }

  spent(account: string, month: string): number {
    return this.data.months[month]?.[account] ?? 0;
  }

  /** Credits held by requests in flight. */
  holding(account: string, month: string): number {
    const m = this.meters.get(account);
    return m !== undefined && m.month === month ? m.held : 0;
  }

  /** Credits left: the quota less what is spent and what requests in flight hold. */
  remaining(account: string, month: string, quota: number): number {
    return Math.max(0, quota - this.spent(account, month) - this.holding(account, month));
  }

  /**
   * Holds `cost` credits for a request, if they are there (concurrent requests never
   * overspend): the meter to settle with, or undefined.
   */
  hold(account: string, month: string, cost: number, quota: number): Meter | undefined {
    let m = this.meters.get(account);
    // A new month gets a new meter; requests of the old one settle with theirs.
    if (m === undefined || m.month !== month) {
      const start = Date.parse(`${month}-01T00:00:00.000Z`);
      m = { account, month, start: start / 1000, end: monthEnd(start), held: 0 };
      this.meters.set(account, m);
    }
    if (quota - this.spent(account, month) - m.held < cost) return undefined;
    m.held += cost;
    return m;
  }

  /** Ends a hold: spends it (a 2xx answer, charged to keyId's day) or gives it back. */
  settle(meter: Meter, cost: number, spend: boolean, keyId: string, now: number): void {
    meter.held -= cost;
    if (!spend) return;
    const spentIn = (this.data.months[meter.month] ??= nameTable());
    spentIn[meter.account] = (spentIn[meter.account] ?? 0) + cost;
    this.unsavedCredits += cost;
    // Its day is of the month its quota held it in: a request answered after the month's end is charged to its last day,
    // added to that day's counts where they are, without moving the ledger's day there and back (newDay twice a request).
    const at = withinMonth(meter, now);
    let day: string;
    if (at === now || (at >= this.day.start && at < this.day.end)) {
      this.useOf(keyId, at)[1] += cost;
      day = this.day.name;
    } else {
      day = dayOf(at);
      const keys = ((this.data.key_days ??= nameTable())[day] ??= nameTable());
      (keys[keyId] ??= [0, 0])[1] += cost;
    }
    this.journalSpending(meter.month, meter.account, cost, keyId, day);
    this.changed();
  }

  /** The spending on disk before its answer leaves; when it cannot be, it is kept in memory for the next save, and said. */
  private journalSpending(month: string, account: string, credits: number, keyId: string, day: string): void {
    // After a failure, not tried again (a file opened, a system call made, on every request of a full disk) until the
    // next save starts a new generation, where a line a full disk cut short stays the last of its file.
    if (this.journalPaused) {
      this.unjournaledCredits += credits;
      return;
    }
    try {
      this.journal.append(month, account, credits, keyId, day);
      if (this.journalFailingSince !== undefined)
        this.log(`usage's journal beside ${printableName(this.path)} is written again.`);
      this.journalFailingSince = undefined;
    } catch (err) {
      this.journalPaused = true;
      this.unjournaledCredits += credits;
      // Said once a failing spell (a save landing ends it), not at every save tried meanwhile.
      if (this.journalFailingSince !== undefined) return;
      this.journalFailingSince = Date.now();
      this.log(
        `cannot write usage's journal beside ${printableName(this.path)}: ${(err as Error).message}; the credits spent are counted in memory and go in the next save, but a kill before it loses them. Tried again at each save.`,
      );
    }
  }

  /** A request made with the key: its last use, and its day's count of requests. */
  touch(keyId: string, now: number): void {
    this.lastUsed.set(keyId, now);
    this.useOf(keyId, now)[0]++;
    this.changed();
  }

  /** The key's [requests, credits] on now's UTC day. */
  private useOf(keyId: string, now: number): [number, number] {
    if (now < this.day.start || now >= this.day.end) this.newDay(now);
    let use = this.day.byKey.get(keyId);
    if (use === undefined) this.day.byKey.set(keyId, (use = this.day.keys[keyId] ??= [0, 0]));
    return use;
  }

  /** Moves to now's UTC day; days before last month are dropped (the dashboard shows this month's). */
  private newDay(now: number): void {
    const name = dayOf(now);
    const days = (this.data.key_days ??= nameTable());
    const d = new Date(now);
    const lastMonth = monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
    for (const old of Object.keys(days)) if (old.slice(0, 7) < lastMonth) delete days[old];
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    const keys = (days[name] ??= nameTable());
    this.day = { name, start, end: start + 86_400_000, keys, byKey: new Map(Object.entries(keys)) };
  }

  /**
   * One account's month as saved and as counted since (the dashboard's): its credits, and of the
   * keys named their [requests, credits] by day and their last uses. Reads only those keys'.
   */
  accountMonth(month: string, account: string, keyIds: readonly string[]): UsageData {
    const last_used = nameTable<string>();
    for (const id of keyIds) {
      const ms = this.lastUsed.get(id);
      const iso = ms === undefined ? this.data.last_used[id] : new Date(ms).toISOString();
      if (iso !== undefined) last_used[id] = iso;
    }
    const key_days: KeyDays = nameTable();
    for (const [day, keys] of Object.entries(this.data.key_days ?? {})) {
      if (!day.startsWith(month)) continue;
      const mine: KeyDays[string] = (key_days[day] = nameTable());
      for (const id of keyIds) {
        const use = Object.hasOwn(keys, id) ? keys[id] : undefined;
        if (use) mine[id] = [use[0], use[1]];
      }
    }
    const months = nameTable([[month, nameTable([[account, this.spent(account, month)]])]]);
    return { months, last_used, key_days };
  }

  /**
   * Marks a change: saved at once if the last save is FLUSH_INTERVAL_MS old (a busy server's
   * timers lag), else when it will be. Saves are never closer together than that: each costs
   * a rename, which the file system makes far dearer than the few bytes written.
   */
  private changed(): void {
    this.dirty = true;
    this.saveWhenDue();
  }

  /** Saves now if the last save is FLUSH_INTERVAL_MS old, else arms the timer for when it will be. */
  private saveWhenDue(): void {
    // A save under way arms the timer for what changed meanwhile once it is written.
    if (this.saving) return;
    const wait = this.lastFlush + this.interval - performance.now();
    if (wait <= 0) void this.flush();
    else this.schedule(wait);
  }

  private schedule(wait = 0): void {
    if (!this.started || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.dirty) this.saveWhenDue();
    }, wait);
  }
}
