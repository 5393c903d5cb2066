/**
 * follow: finds the daily incremental dumps a snapshot has not had yet, from Wikimedia
 * (other/incr/<wiki>/<YYYYMMDD>/<wiki>-<YYYYMMDD>-pages-meta-hist-incr.xml.bz2, each day's
 * directory saying "done" in its status.txt once complete) or from a local directory laid
 * out the same way (or with the files side by side), and applies them in one update.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { DumpError } from "../ingest";
import type { SnapshotMeta } from "../snapshot";
import { printableName } from "../printable";
import { WIKIMEDIA_INCR } from "../build-defaults";

/** The name of a day's incremental dump. */
export const incrName = (wiki: string, day: string) => `${wiki}-${day}-pages-meta-hist-incr.xml.bz2`;

/** The wiki's database name (enwiki), from the snapshot, or from a Wikipedia host when the dump had none. */
export function wikiOf(meta: SnapshotMeta): string | undefined {
  if (meta.wiki.dbname) return meta.wiki.dbname;
  const m = /^([a-z0-9-]+)\.wikipedia\.org$/.exec(meta.wiki.host);
  return m ? `${m[1]!.replace(/-/g, "_")}wiki` : undefined;
}

/** The days already applied to a snapshot (meta.updates), sorted. */
export function appliedDays(meta: SnapshotMeta): string[] {
  return [...new Set((meta.updates ?? []).flatMap((u) => u.days))].sort();
}

/** The day (YYYYMMDD, UTC) of a Unix time. */
export const dayOf = (tsUnix: number) => new Date(tsUnix * 1000).toISOString().slice(0, 10).replace(/-/g, "");

/** Where a day's dumps come from: a local directory or an HTTP(S) mirror of other/incr. */
export interface DumpPlace {
  /** The days there, sorted: those complete, and those still being written (their status.txt does not say done). */
  days(wiki: string): Promise<{ done: string[]; unfinished: string[] }>;
  /** The path or URL of a day's dump. */
  dump(wiki: string, day: string): string;
}

const DAY = /^(\d{8})$/;

/** A local directory: <dir>/<wiki>/<day>/<name> (as mirrored) or <dir>/<name>. */
export function localPlace(dir: string): DumpPlace {
  if (!existsSync(dir))
    throw new DumpError(`no such directory: ${printableName(dir)}. Give the folder holding the incremental dumps.`, {
      missing: dir,
    });
  if (!statSync(dir).isDirectory())
    throw new DumpError(
      `${printableName(dir)} is a file: give the folder holding the incremental dumps (<dir>/<wiki>/<YYYYMMDD>/).`,
    );
  const nested = (wiki: string, day: string) => join(dir, wiki, day, incrName(wiki, day));
  return {
    async days(wiki) {
      const found = new Set<string>();
      const unfinished = new Set<string>();
      const flat = new RegExp(`^${wiki}-(\\d{8})-pages-meta-hist-incr\\.xml\\.bz2$`);
      for (const name of readdirSync(dir)) {
        const day = flat.exec(name)?.[1];
        if (day) found.add(day);
      }
      if (existsSync(join(dir, wiki))) {
        for (const day of readdirSync(join(dir, wiki))) {
          if (!DAY.test(day)) continue;
          const status = join(dir, wiki, day, "status.txt");
          // A day being written is not taken; a copy without status.txt is.
          if (existsSync(status) && !isDone(readFileSync(status, "utf8"))) unfinished.add(day);
          else if (existsSync(nested(wiki, day))) found.add(day);
        }
      }
      return { done: [...found].sort(), unfinished: [...unfinished].filter((d) => !found.has(d)).sort() };
    },
    dump(wiki, day) {
      return existsSync(nested(wiki, day)) ? nested(wiki, day) : join(dir, incrName(wiki, day));
    },
  };
}

/** The most a wiki's listing of days may be (Wikimedia's is a few KB), and a day's status.txt. */
const MAX_LISTING_BYTES = 1 << 20;
const MAX_STATUS_BYTES = 4096;
/** How long a listing or status.txt may take, whole; a dump itself is not timed (it is read as the update goes). */
const LISTING_TIMEOUT_MS = 60_000;

/** Wikimedia's layout over HTTP(S): the wiki's index lists the days, each day's status.txt says when it is done. */
export function httpPlace(
  base: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs: number = LISTING_TIMEOUT_MS,
): DumpPlace {
  const root = base.replace(/\/+$/, "");
  // A mirror's answer that never ends, or is gigantic, stops at a bound: the run fails, saying so, and nothing is written.
  const text = async (url: string, maxBytes: number): Promise<{ ok: boolean; status: number; text: string }> => {
    const signal = AbortSignal.timeout(timeoutMs);
    const cut = (why: string) =>
      new DumpError(`${url} ${why}: is ${root} a mirror of ${WIKIMEDIA_INCR}? Check --url, or use --from <dir>.`);
    let res: Response;
    try {
      res = await fetchImpl(url, { redirect: "follow", signal });
    } catch (err) {
      if (signal.aborted) throw cut(`did not answer within ${timeoutMs / 1000} s`);
      throw new DumpError(
        `cannot reach ${url}: ${(err as Error).message}. Check the network, or use --from <dir> with dumps fetched another way.`,
      );
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return { ok: false, status: res.status, text: "" };
    }
    const parts: Uint8Array[] = [];
    let length = 0;
    try {
      for await (const part of res.body) {
        length += part.byteLength;
        if (length > maxBytes) {
          await res.body.cancel().catch(() => {});
          throw cut(`is longer than ${maxBytes} bytes`);
        }
        parts.push(part);
      }
    } catch (err) {
      if (err instanceof DumpError) throw err;
      if (signal.aborted) throw cut(`did not end within ${timeoutMs / 1000} s`);
      throw new DumpError(`the answer of ${url} broke off (${(err as Error).message}). Run again.`);
    }
    return { ok: true, status: res.status, text: new TextDecoder().decode(Buffer.concat(parts)) };
  };
  return {
    async days(wiki) {
      const index = await text(`${root}/${wiki}/`, MAX_LISTING_BYTES);
      if (!index.ok)
        throw new DumpError(
          `cannot list ${root}/${wiki}/: HTTP ${index.status}. Check the wiki's name (--wiki) and the address (--url).`,
        );
      const listed = [...new Set([...index.text.matchAll(/href="(\d{8})\/?"/g)].map((m) => m[1]!))].sort();
      // Wikimedia always lists about two weeks: none is an error page served as 200, not "up to date" (D158).
      if (!listed.length)
        throw new DumpError(
          `${root}/${wiki}/ lists no day (no link to a <YYYYMMDD>/ folder): is ${root} a mirror of ${WIKIMEDIA_INCR}? Check --url and --wiki.`,
        );
      const done: string[] = [];
      const unfinished: string[] = [];
      for (const day of listed) {
        const status = await text(`${root}/${wiki}/${day}/status.txt`, MAX_STATUS_BYTES);
        if (status.ok && isDone(status.text)) done.push(day);
        else unfinished.push(day);
      }
      return { done, unfinished };
    },
    dump(wiki, day) {
      return `${root}/${wiki}/${day}/${incrName(wiki, day)}`;
    },
  };
}

/** status.txt of a finished day: "done" (older runs) or "Status: done". */
function isDone(status: string): boolean {
  return /(^|\s|:)done\b/i.test(status.trim());
}

/** The next day after a YYYYMMDD day. */
export function nextDay(day: string): string {
  const d = new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)) + 1));
  return d.toISOString().slice(0, 10).replace(/-/g, "");
}

/**
 * The days to apply: those published from `start` on (by default the day after the last one
 * applied, or the day of the snapshot's newest page), and any days missing before them.
 */
export function daysToApply(
  published: string[],
  start: string,
): { days: string[]; missing: { first: string; last: string; count: number }[] } {
  const days = published.filter((d) => d >= start);
  const missing: { first: string; last: string; count: number }[] = [];
  let from = start;
  for (const day of days) {
    if (day > from)
      missing.push({
        first: from,
        last: previousDay(day),
        count: Math.round((dateOf(day) - dateOf(from)) / 86_400_000),
      });
    from = nextDay(day);
  }
  return { days, missing };
}

const dateOf = (day: string) => Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));

function previousDay(day: string): string {
  return new Date(dateOf(day) - 86_400_000).toISOString().slice(0, 10).replace(/-/g, "");
}
