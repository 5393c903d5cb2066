/**
 * Ranking rules D36/D37, quoted phrases: a phrase no chunk holds is dropped from the query
 * (searched by its words), and the candidates kept are the chunks holding every phrase left,
 * as consecutive words of the text or of the section heading (from the stored positions).
 */
import { indexKey } from "../text/analyze";
import { SECTION_FIELD, TEXT_FIELD } from "../postings/fields";
import type { ParsedQuery } from "../text/query";
import type { SearchContext } from "./context";

/** How many chunks holding a phrase's rarest word are checked for the phrase before it counts as absent. */
const PHRASE_VISITS = 16_384;

/**
 * The query with only the quoted phrases some chunk holds (D37), asked when the ranking found no chunk holding them all (D121): a claim quoting a title
 * or a saying loosely is searched by its words rather than answered with nothing. Checks at
 * most PHRASE_VISITS chunks holding the phrase's rarest word, the first in chunk order; a
 * phrase found in none of them counts as absent.
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
  const { text, textCursor: cursor } = ctx;
  // The chunks of the phrase's rarest word, in chunk order, in the fields phrases are read in.
  const rarest = sequence.reduce((a, b) => (text.frequency(b) < text.frequency(a) ? b : a));
  let visited = 0;
  for (const l of text.termLists(rarest)) {
    if (l.field !== TEXT_FIELD && l.field !== SECTION_FIELD) continue;
    cursor.open(l.address);
    for (let b = 0; b < cursor.blocks && visited < PHRASE_VISITS; b++) {
      const n = cursor.decode(b);
      visited += n;
      ctx.meter.add(0, n);
      for (let i = 0; i < n; i++) if (holds(cursor.docs[i]!)) return true;
    }
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

/** Clears keep[i] of the chunks from + at[i] (ascending, i < n) that do not hold what the filter asks. */
export type ChunkFilter = (from: number, at: Uint32Array, n: number, keep: Uint8Array) => void;

/** chunkCheck() asked of many chunks at once (ShardPositions.sequenceFilter): in the text, then the others in the heading. */
function chunkFilter(ctx: SearchContext, sequence: number[]): ChunkFilter {
  const inText = ctx.text.sequenceFilter(sequence, TEXT_FIELD);
  const inHeading = ctx.text.sequenceFilter(sequence, SECTION_FIELD);
  if (!inText || !inHeading) return inText ?? inHeading ?? ((_from, _at, n, keep) => keep.fill(0, 0, n));
  let held = new Uint8Array(0);
  return (from, at, n, keep) => {
    if (held.length < n) held = new Uint8Array(n * 2);
    // keep: asked of the heading where the text does not hold the phrase; held: where it does.
    for (let i = 0; i < n; i++) held[i] = keep[i]!;
    inText(from, at, n, held);
    for (let i = 0; i < n; i++) if (held[i]) keep[i] = 0;
    inHeading(from, at, n, keep);
    for (let i = 0; i < n; i++) keep[i] = keep[i]! | held[i]!;
  };
}

/** Whether a chunk holds every quoted phrase of the query; undefined when the index lacks a phrase's word (no chunk holds it). */
export function phraseCheck(ctx: SearchContext, query: ParsedQuery): ((doc: number) => boolean) | undefined {
  return phrasesOf(ctx, query)?.holds;
}

/**
 * The query's quoted phrases as their index terms (every phrase's words, in order) and the check of a chunk holding
 * them all; undefined when the index lacks a phrase's word (no chunk holds it).
 */
export function phrasesOf(
  ctx: SearchContext,
  query: ParsedQuery,
): { terms: number[]; holds: (doc: number) => boolean; filter: ChunkFilter } | undefined {
  const terms: number[] = [];
  const checks: ((doc: number) => boolean)[] = [];
  const filters: ChunkFilter[] = [];
  for (const phrase of query.phrases) {
    const sequence = phraseTerms(ctx, phrase);
    if (!sequence) return undefined;
    terms.push(...sequence);
    checks.push(chunkCheck(ctx, sequence));
    filters.push(chunkFilter(ctx, sequence));
  }
  const filter: ChunkFilter = (from, at, n, keep) => {
    for (const f of filters) f(from, at, n, keep);
  };
  if (checks.length === 1) return { terms, holds: checks[0]!, filter };
  return {
    terms,
    holds: (doc) => {
      for (const holds of checks) if (!holds(doc)) return false;
      return true;
    },
    filter,
  };
}
