/**
 * Ranking rules D36/D37, quoted phrases: a phrase no chunk holds is dropped from the query
 * (searched by its words), and the candidates kept are the chunks holding every phrase left,
 * as consecutive words of the text or of the section heading (from the stored positions).
 */
import { indexKey } from "../text/analyze";
import { matchAll } from "../ranking/conjunction";
import { SECTION_FIELD, TEXT_FIELD } from "../index/fields";
import type { ParsedQuery } from "../text/query";
import type { SearchContext } from "./context";
import type { Candidate } from "./pool";

/** How many chunks holding a phrase's words are checked for the phrase before it counts as absent. */
const PHRASE_CHECKS = 1000;
/** The first window of chunks searched for a phrase's words; each next one is twice as wide. */
const PHRASE_WINDOW = 4096;

/**
 * The query with only the quoted phrases some chunk holds (D36): a claim quoting a title
 * or a saying loosely is searched by its words rather than answered with nothing. Checks at
 * most PHRASE_CHECKS chunks holding a phrase's words, the first in chunk order; a phrase found
 * in none of them counts as absent.
 */
export function existingPhrases(ctx: SearchContext, query: ParsedQuery): ParsedQuery {
  if (!query.phrases.length) return query;
  const phrases = query.phrases.filter((phrase) => ctx.meter.late() || someChunkHolds(ctx, phrase));
  return phrases.length === query.phrases.length ? query : { ...query, phrases };
}

function someChunkHolds(ctx: SearchContext, phrase: string[]): boolean {
  const sequence = phraseTerms(ctx, phrase);
  if (!sequence) return false;
  const holds = chunkCheck(ctx, sequence);
  const specs = phrase.map((w) => ({ key: indexKey(w), prefix: false, fuzzy: 0 }));
  const full = 2 ** specs.length - 1;
  const into = ctx.scratch.textBuffer(0);
  const chunks = ctx.text.documentCount;
  let checked = 0;
  // The chunks holding every word (their conjunction: no scores needed), in chunk order, a
  // window at a time: words in most chunks need not be read past the first thousand.
  for (let from = 0, size = PHRASE_WINDOW; from < chunks && checked < PHRASE_CHECKS; from += size, size *= 2) {
    const m = ctx.meter.counted(
      matchAll(ctx.text, ctx.textCursor, specs, full, { into, scored: false, from, to: from + size })!,
    );
    for (let i = 0; i < m.count && checked < PHRASE_CHECKS; i++, checked++) if (holds(m.docs[i]!)) return true;
  }
  return false;
}

/** A phrase's words as text-shard term numbers; undefined when the index lacks one (no chunk holds it). */
function phraseTerms(ctx: SearchContext, phrase: string[]): number[] | undefined {
  const sequence: number[] = [];
  for (const w of phrase) {
    const term = ctx.text.termOf(indexKey(w));
    if (term === undefined) return undefined;
    sequence.push(term);
  }
  return sequence;
}

/** Whether a chunk's text or its section heading holds a phrase's terms as consecutive words. */
function chunkCheck(ctx: SearchContext, sequence: number[]): (doc: number) => boolean {
  const inText = ctx.text.sequenceCheck(sequence, TEXT_FIELD);
  const inHeading = ctx.text.sequenceCheck(sequence, SECTION_FIELD);
  if (inText && inHeading) return (doc) => inText(doc) || inHeading(doc);
  return inText ?? inHeading ?? (() => false);
}

/** The pool's chunks holding every phrase, and the factor that scales their count to the pool's (1 when every candidate was checked). */
export interface KeptPhrases {
  list: Candidate[];
  estimate: number;
}

/**
 * Keeps the pool's chunks holding every quoted phrase: every candidate is checked, so that a
 * page's rank never depends on how many pages were asked for (D61). Only the time budget
 * stops the checks early; the share that held then scales the count.
 */
export function keepPhrases(ctx: SearchContext, query: ParsedQuery): KeptPhrases {
  const { pool } = ctx.scratch;
  const holds = phraseCheck(ctx, query);
  if (!holds) return { list: [], estimate: 1 };
  const kept: Candidate[] = [];
  let checked = 0;
  for (let i = 0; i < pool.size; i++) {
    if (i % 64 === 63 && ctx.meter.late()) break;
    checked = i + 1;
    if (!holds(pool.docs[i]!)) continue;
    const c = pool.candidate(i);
    c.position = i;
    kept.push(c);
  }
  const estimate = checked < pool.size && checked > 0 ? pool.size / checked : 1;
  return { list: kept, estimate };
}

/** Whether a chunk holds every quoted phrase of the query; undefined when the index lacks a phrase's word (no chunk holds it). */
export function phraseCheck(ctx: SearchContext, query: ParsedQuery): ((doc: number) => boolean) | undefined {
  const checks: ((doc: number) => boolean)[] = [];
  for (const phrase of query.phrases) {
    const sequence = phraseTerms(ctx, phrase);
    if (!sequence) return undefined;
    checks.push(chunkCheck(ctx, sequence));
  }
  if (checks.length === 1) return checks[0];
  return (doc) => {
    for (const holds of checks) if (!holds(doc)) return false;
    return true;
  };
}
