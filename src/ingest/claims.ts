/**
 * Which revision of a page wins, and which page keeps a title. Two rules, for two places a
 * page can be read more than once:
 * - within one page of a history dump, the revision with the later timestamp (compared as the
 *   dump writes it, ISO 8601); on a tie the first read stays;
 * - across dumps, the page read with the later timestamp, then the higher revision id: its
 *   claim replaces the older one, and the newest claim on a title keeps it.
 */
import { toUnix } from "./article";
import type { Claim, ClaimTable } from "./claim-table";
import type { RawPage } from "./raw-page";

/** A revision of a page in a history dump, as the reader holds it while it reads the page. */
export interface HistoryRevision {
  /** As written in the dump (ISO 8601). */
  timestamp: string;
}

/** Within one page: whether revision a replaces b, the newest read so far (the first read when none). */
export const newerInHistory = (a: HistoryRevision, b: HistoryRevision | null): boolean =>
  !b || a.timestamp > b.timestamp;

/** Across dumps: whether revision a is newer than b: the later timestamp, then the higher revision id. */
export const newer = (a: { tsUnix: number; revId: number }, b: { tsUnix: number; revId: number }) =>
  a.tsUnix !== b.tsUnix ? a.tsUnix > b.tsUnix : a.revId > b.revId;

/** MediaWiki's canonical form of a title: spaces for underscores, no anchor, first letter upper case. */
export function canonicalTitle(title: string): string {
  const t = title.replace(/#.*$/s, "").replace(/_/g, " ").replace(/\s+/g, " ").trim();
  if (!t) return t;
  const first = String.fromCodePoint(t.codePointAt(0)!);
  return first.toUpperCase() + t.slice(first.length);
}

export function claimFor(page: RawPage): Claim {
  const base = { title: canonicalTitle(page.title), revId: page.revId, tsUnix: toUnix(page.timestamp) };
  return page.redirect !== undefined
    ? { ...base, kind: "redirect", target: canonicalTitle(page.redirect) }
    : { ...base, kind: "article" };
}

/**
 * The page that keeps each title: the newest claim on it, among the redirects and the articles
 * `converted` holds (an article whose conversion failed claims nothing); of equal claims, the
 * page id claimed first. Returns the holders' rows, in no particular order. The rows are
 * sorted by title (and row) rather than put in a map by title: one number a row, not an entry
 * and a string.
 */
export function titleHolders(claims: ClaimTable, converted: (row: number) => boolean): number[] {
  const rows: number[] = [];
  for (let row = 0; row < claims.size; row++) if (!claims.isArticle(row) || converted(row)) rows.push(row);
  const sorted = Uint32Array.from(rows).sort((a, b) => claims.compareTitles(a, b) || a - b);
  const holders: number[] = [];
  for (let i = 0; i < sorted.length; ) {
    let holder = sorted[i]!;
    let j = i + 1;
    for (; j < sorted.length && claims.compareTitles(sorted[j]!, holder) === 0; j++) {
      if (newer(claims.version(sorted[j]!), claims.version(holder))) holder = sorted[j]!;
    }
    holders.push(holder);
    i = j;
  }
  return holders;
}
