/**
 * Which revision of a page wins, and which page keeps a title. Two rules, for two places a
 * page can be read more than once:
 * - within one page of a history dump, the revision with the later timestamp (compared as the
 *   dump writes it, ISO 8601); on a tie the first read stays;
 * - across dumps, the page read with the later timestamp, then the higher revision id: its
 *   claim replaces the older one, and the newest claim on a title keeps it.
 */
import { toUnix } from "./article";
import { KeptBytes, SortedRuns } from "../sorted-runs";
import type { Claim, ClaimTable, StandingClaim } from "./claim-table";
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

/** A title's holder as titleHolders gives it: valid until the next. */
export interface TitleHolder {
  pageId: number;
  article: boolean;
  revId: number;
  tsUnix: number;
  /** UTF-8; a redirect's target (empty for an article). */
  title: Uint8Array;
  target: Uint8Array;
}

/**
 * The page that keeps each title: the newest claim on it, among the redirects and the articles
 * converted (an article whose conversion failed claims nothing); of equal claims, the page id
 * claimed first. Yields the holders in title order (JS string order, as `a < b` orders
 * titles). The claims are sorted by title in runs on disk (`besides`), not in memory: one
 * title and target each, for millions of pages. `each` sees every standing claim first.
 */
export function* titleHolders(
  claims: ClaimTable,
  besides: string,
  each?: (claim: StandingClaim) => void,
  runBytes = TITLE_RUN_BYTES,
): Generator<TitleHolder> {
  // [row, pageId, article, revId, tsUnix], [title, target]: by title, then row (the order pushed).
  const byTitle = new SortedRuns({
    besides,
    numbers: 5,
    strings: 2,
    keyFields: 0,
    stringKey: true,
    budgetBytes: runBytes,
  });
  try {
    for (const c of claims.standing()) {
      each?.(c);
      if (c.article && !c.converted) continue;
      byTitle.push([c.row, c.pageId, c.article ? 1 : 0, c.revId, c.tsUnix], [c.title, c.target]);
    }
  } catch (err) {
    byTitle.close();
    throw err;
  }
  // The claim table's columns, let go as standing() ended (about 0.5 GB at English Wikipedia's 18M pages), are given
  // back before the holders' columns grow: left to the collector and the allocator's purge delay (D209), they stayed.
  Bun.gc(true);
  const holder: TitleHolder = {
    pageId: 0,
    article: false,
    revId: 0,
    tsUnix: 0,
    title: new Uint8Array(0),
    target: new Uint8Array(0),
  };
  const title = new KeptBytes();
  const target = new KeptBytes();
  let held = false;
  for (const r of byTitle.drain()) {
    const t = r.string(0);
    const sameTitle = held && sameBytes(t, holder.title);
    const v = r.numbers;
    if (sameTitle && !newer({ tsUnix: v[4]!, revId: v[3]! }, holder)) continue;
    if (held && !sameTitle) yield holder;
    // Copied: the record's views go with the next one.
    holder.title = title.keep(t);
    holder.target = target.keep(r.string(1));
    holder.pageId = v[1]!;
    holder.article = v[2] === 1;
    holder.revId = v[3]!;
    holder.tsUnix = v[4]!;
    held = true;
  }
  if (held) yield holder;
}

/** Whether a redirect leads somewhere: its target is not empty and not its own title. */
export function leadsElsewhere(h: TitleHolder): boolean {
  return h.target.length > 0 && !sameBytes(h.target, h.title);
}

/** Bytes of titles held before they are sorted and written as a run. */
const TITLE_RUN_BYTES = 24 << 20;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
