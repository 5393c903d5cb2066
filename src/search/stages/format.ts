/**
 * Formatting: a ranked page's passage as a search hit, its title and text cropped and
 * highlighted (highlight.ts) with the query's words and the index terms its chunk holds.
 */
import { termOfKey } from "../analyze";
import { formatText, formatTitle } from "../highlight";
import { DEFAULTS, type Hit, type SearchOptions } from "../options";
import type { ParsedQuery } from "../query";
import type { SearchContext } from "./context";
import type { Candidate } from "./pool";

export function toHit(ctx: SearchContext, pageIdx: number, c: Candidate, query: ParsedQuery, options: SearchOptions): Hit {
  const page = ctx.catalog.pages.shown(pageIdx);
  const chunk = c.chunk - ctx.catalog.firstChunk[pageIdx]!;
  const matched = new Set([...termsOf(ctx, c), ...query.words]);
  const highlight = options.highlight ?? DEFAULTS.highlight;
  return {
    page,
    chunk,
    score: c.score,
    formatted: {
      title: formatTitle(page.title, matched, highlight, ctx.lang),
      text: formatText(page.chunkText(chunk), matched, options.cropLength ?? DEFAULTS.cropLength, highlight, ctx.lang),
    },
  };
}

/** The index terms derived from the query that the candidate's chunk holds. */
function termsOf(ctx: SearchContext, c: Candidate): string[] {
  if (!c.terms) {
    const found = new Set<string>();
    for (const d of c.derived) if (ctx.text.holds(d.term, c.chunk)) found.add(termOfKey(ctx.text.keyOf(d.term)));
    c.terms = [...found];
  }
  return c.terms;
}
