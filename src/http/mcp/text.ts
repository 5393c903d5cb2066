/**
 * The tools' results as text a model reads: the passages themselves, each with what to cite it
 * by (title, url, revision permalink, passage id), and the attribution notice last. The same
 * facts as the structured content, which is the REST body (for get_page and lucky without the
 * passages' text, which is sent once, here: D59).
 */
import type { Static } from "@sinclair/typebox";
import type {
  Attribution,
  ChangesResponse,
  Chunk,
  LuckyResponse,
  PageChunk,
  PageResponse,
  SearchResponse,
  Source,
} from "../schemas";

const notice = (a: Attribution) => `Attribution: ${a.attribution_notice}`;
const section = (heading: string) => heading || "introduction";
const cited = (url: string, source: Source) => `${url} (revision: ${source.permalink})`;
/** The query as a JSON string: a phrase's own quotes escaped (`"\\"black-sky albedo\\""`), not doubled. */
const quoted = (query: string) => JSON.stringify(query);

export function searchText(r: Static<typeof SearchResponse>): string {
  if (!r.hits.length)
    return `No passage matches ${quoted(r.query)}${r.offset ? ` past offset ${r.offset}` : ""} (${r.estimatedTotalHits} in all).\n\n${notice(r.attribution)}`;
  const hits = r.hits.map(
    (h, i) =>
      `[${r.offset + i + 1}] ${h.title} · ${section(h.section)}${h._rankingScore === undefined ? "" : ` · score ${h._rankingScore.toFixed(3)}`}\npage_id ${h.page_id} · passage ${h.id} · ${cited(h.url, h.source)}\n${h.text}`,
  );
  const head = `${r.hits.length} ${r.hits.length === 1 ? "hit" : "hits"} for ${quoted(r.query)}, from ${r.offset + 1} (about ${r.estimatedTotalHits} in all)${r.timedOut ? ", the best found before the search's time limit" : ""}:`;
  return [head, ...hits, notice(r.attribution)].join("\n\n");
}

/** The passages in order, each section's heading once. */
function passages(chunks: PageChunk[]): string {
  const out: string[] = [];
  let heading: string | undefined;
  for (const c of chunks) {
    if (c.section !== heading && c.section) out.push(`## ${c.section}`);
    heading = c.section;
    out.push(c.text);
  }
  return out.join("\n\n");
}

function article(r: Static<typeof PageResponse> | Static<typeof LuckyResponse>): string {
  const { page, chunks } = r;
  const head = `${page.title} (page_id ${page.page_id}, revision ${page.rev_id}, last changed ${page.timestamp})\n${cited(page.url, page.source)}`;
  const end = chunks.offset + chunks.results.length;
  const window = chunks.results.length
    ? `Passages ${chunks.offset + 1} to ${end} of ${chunks.total}:\n\n${passages(chunks.results)}`
    : `No passage from offset ${chunks.offset}: the article has ${chunks.total}.`;
  // The tools answer a window (D59): say how to read on rather than leave the article cut short silently.
  const more =
    chunks.results.length && end < chunks.total
      ? `\n\n(Passages ${end + 1} to ${chunks.total} follow: get_page with page_id ${page.page_id} and offset ${end}.)`
      : "";
  return `${head}\n\n${window}${more}`;
}

export function pageText(r: Static<typeof PageResponse>): string {
  return `${article(r)}\n\n${notice(r.attribution)}`;
}

export function luckyText(r: Static<typeof LuckyResponse>): string {
  const matched = r.search_context.matched_chunk;
  const { offset, results } = r.chunks;
  // The structured content leaves the matched passage's text out too (D59): shown here when the window does not hold it.
  const shown = matched.chunk_id >= offset && matched.chunk_id < offset + results.length;
  const outside = shown
    ? ""
    : `\n\nThe passage that matched (${matched.id}, ${section(matched.section)}):\n\n${matched.text}`;
  return `The article for ${quoted(r.search_context.query)} (it matched passage ${matched.id}, ${section(matched.section)}):\n\n${article(r)}${outside}\n\n${notice(r.attribution)}`;
}

export function chunkText(c: Static<typeof Chunk> & { attribution: Attribution }): string {
  return `${c.title} · ${section(c.section)} (passage ${c.id})\n${cited(c.url, c.source)}\n\n${c.text}\n\n${notice(c.attribution)}`;
}

export function changesText(r: Static<typeof ChangesResponse>, since: number): string {
  // Dates end at 8.64e15 ms; a later since (D3 allows it) is shown as the number it is.
  const from = since * 1000 <= 8.64e15 ? new Date(since * 1000).toISOString() : `Unix second ${since}`;
  if (!r.results.length)
    return `No article changed since ${from} from offset ${r.offset} (${r.total} in all).\n\n${notice(r.attribution)}`;
  const lines = r.results.map(
    (p) =>
      `- ${p.title} (page_id ${p.page_id}, revision ${p.rev_id}, changed ${p.timestamp}, ts_unix ${p.ts_unix}) ${p.url}`,
  );
  return `Articles changed since ${from}, ${r.offset + 1} to ${r.offset + r.results.length} of ${r.total}:\n${lines.join("\n")}\n\n${notice(r.attribution)}`;
}
