/**
 * The MCP tools: search, get_page, get_chunk, lucky and changes, over the engine and resources
 * of one loaded snapshot. Each takes the REST route's TypeBox schema as its input schema (read
 * by the same strict rules, arguments.ts) and answers the REST route's body as its structured
 * content, attribution included, with readable text beside it (text.ts). The bodies are built
 * as the routes build them (routes/*.ts). get_page and lucky differ (D59): they answer a window
 * of MCP_CHUNKS passages unless asked for more, and the passages' text is in the readable text
 * only, not in the structured content too.
 */
import { CloneType, Type as t, type TObject, type TSchema } from "@sinclair/typebox";
import type { ApiContext } from "../context";
import { ERRORS } from "../errors";
import type { Filled, ReadOptions } from "../params";
import type { Exchange } from "../pipeline";
import type { PoolGeneration } from "../pool/pool";
import { readSince } from "../routes/changes";
import {
  Attribution,
  ChangesQuery,
  ChangesResponse,
  Chunk,
  ChunkParams,
  ChunkWindow,
  LuckyQuery,
  LuckyResponse,
  PageChunk,
  PageParams,
  PageQuery,
  PageResponse,
  SearchQuery,
  SearchResponse,
} from "../schemas";
import { readArguments } from "./arguments";
import { changesText, chunkText, luckyText, pageText, searchText } from "./text";

/** D59: the passages get_page and lucky answer unless max_chunks asks for more (a long article is 300 KB whole). */
const MCP_CHUNKS = 10;

// Copies taken before any Elysia app is made: Elysia rewrites a route's schemas in place.
const maxChunks = () =>
  Object.assign(CloneType(PageQuery.properties.max_chunks), {
    default: MCP_CHUNKS,
    description: "Passages to return; read on with get_page's offset",
  });
const Inputs = {
  search: CloneType(SearchQuery),
  // No format: the passages' text is the readable text, so concat would add nothing (D59).
  get_page: t.Object({
    page_id: CloneType(PageParams.properties.page_id),
    max_chunks: maxChunks(),
    offset: CloneType(PageQuery.properties.offset),
  }),
  get_chunk: CloneType(ChunkParams),
  lucky: t.Object({ q: CloneType(LuckyQuery.properties.q), max_chunks: maxChunks() }),
  changes: CloneType(ChangesQuery),
};

/** An article body's window with the passages' text left out: the readable text carries it (D59). */
const TextlessWindow = t.Object({
  ...CloneType(ChunkWindow).properties,
  results: t.Array(t.Omit(CloneType(PageChunk), ["text"])),
});
function textless<T extends TObject>(body: T) {
  const { text: _, ...rest } = CloneType(body).properties;
  return t.Object({ ...rest, chunks: TextlessWindow });
}
const luckyOutput = () => {
  const output = textless(LuckyResponse);
  const context = CloneType(LuckyResponse.properties.search_context);
  const search_context = t.Object(
    { ...context.properties, matched_chunk: t.Omit(context.properties.matched_chunk, ["text"]) },
    { description: context.description },
  );
  return t.Object({ ...output.properties, search_context });
};

const Outputs = {
  search: CloneType(SearchResponse),
  get_page: textless(PageResponse),
  // A chunk's REST body names its source and license; a tool's result also says how to credit it.
  get_chunk: t.Object({ ...CloneType(Chunk).properties, attribution: CloneType(Attribution) }),
  lucky: luckyOutput(),
  changes: CloneType(ChangesResponse),
};

/** The body without its passages' text (structured content beside text that has it). */
function withoutText<B extends { chunks: { results: { text: string }[] }; text?: string }>(
  body: B,
): Record<string, unknown> {
  const { text: _, ...rest } = body;
  return {
    ...rest,
    chunks: { ...body.chunks, results: body.chunks.results.map(({ text: _text, ...chunk }) => chunk) },
  };
}

function luckyWithoutText(body: ReturnType<ApiContext["answers"]["lucky"]>): Record<string, unknown> {
  const { text: _, ...matched } = body.search_context.matched_chunk;
  return { ...withoutText(body), search_context: { ...body.search_context, matched_chunk: matched } };
}

interface Answer {
  structured: Record<string, unknown>;
  text: string;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  input: TObject;
  output: TSchema;
  /**
   * Reads the arguments strictly and answers (in a search worker, for the search tools when the
   * server has a pool: x's key is charged its time there), or throws the ApiError the caller should see.
   */
  call(args: Record<string, unknown> | undefined, x?: Exchange): Answer | Promise<Answer>;
  /** Answers arguments read already, on this thread (what a search worker runs). */
  answer(args: unknown): Answer;
}

function tool<I extends TObject>(spec: {
  name: keyof typeof Inputs;
  title: string;
  description: string;
  read?: ReadOptions;
  /** Runs in the pool's workers when the server has them (ctx.searches). */
  pooled?: PoolGeneration;
  run(args: Filled<I>): Answer;
}): Tool {
  const input = Inputs[spec.name] as unknown as I;
  const pooled = spec.pooled;
  const task = `tool:${spec.name}` as "tool:search" | "tool:lucky";
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    input,
    output: Outputs[spec.name],
    call: (args, x) => {
      const read = readArguments(input, args, spec.read);
      if (!pooled) return spec.run(read);
      return pooled.tool(task, read, x).then((answer) => answer ?? spec.run(read));
    },
    answer: (args) => spec.run(args as Filled<I>),
  };
}

export function toolsOf({ answers, attributions, meta, searches }: ApiContext): Tool[] {
  const site = `${meta.content_source.name} (${meta.content_source.project})`;
  const cite =
    "Cite what you use by its article title and url (or source.permalink, the exact revision), and say the text is from " +
    `${meta.content_source.name} under CC BY-SA 4.0, modified: the attribution object in every result says how.`;

  return [
    tool<typeof Inputs.search>({
      name: "search",
      title: "Search articles",
      description:
        `Full-text search over the passages of ${site} articles. Returns up to limit hits, best first, one per article: its best-matching ` +
        "passage, with the passage's text, section and id, the article's title, page_id and url, and a permalink to the revision. " +
        "Articles whose title matches come first, then those containing every word. Put words in double quotes to require the phrase. " +
        "Use it to find which articles cover a subject; then read a whole article with get_page (its page_id) or one passage with " +
        "get_chunk (its id). With page_id, it lists the matching passages of that one article instead. " +
        cite,
      pooled: searches,
      run(q) {
        const body = answers.search(q);
        return { structured: body, text: searchText(body) };
      },
    }),
    tool<typeof Inputs.get_page>({
      name: "get_page",
      title: "Read an article",
      description:
        "Reads one article by its page_id (from search, lucky or changes): its passages (chunks) in order, each with its section, and " +
        `the article's title, url, revision and last modification time. ${MCP_CHUNKS} passages from offset (0, the start) by default; ` +
        "max_chunks asks for more, offset reads on (chunks.total says how many there are). The passages' text is in the text " +
        "content; the structured content lists them (id, section) without it. " +
        cite,
      read: { codes: { page_id: ERRORS.pageIdNotInteger } },
      run: (q) => {
        const body = answers.page(q.page_id, { ...q, format: "chunks" });
        return { structured: withoutText(body), text: pageText(body) };
      },
    }),
    tool<typeof Inputs.get_chunk>({
      name: "get_chunk",
      title: "Read a passage",
      description:
        "Reads one passage by its id, {page_id}_{chunk_index}, as search hits name it: its text and section, the article's title and " +
        "url, a permalink to the revision, the license and the changes made to the source text. Use it to quote or check a passage " +
        "found earlier. " +
        cite,
      run: (q) => {
        const { page, chunk } = answers.chunk(q.id);
        const body = { ...chunk, attribution: attributions.page(page.title, chunk.url) };
        return { structured: body, text: chunkText(body) };
      },
    }),
    tool<typeof Inputs.lucky>({
      name: "lucky",
      title: "The article for a subject",
      description:
        "Finds the one article that best answers a query and returns its start: an exact title match (any case, redirects followed) " +
        `wins, else the article of the best search hit. Returns the article's first ${MCP_CHUNKS} passages (max_chunks asks for more; ` +
        "get_page with its page_id and offset reads on) and the passage that matched (search_context). The passages' text is in " +
        "the text content; the structured content lists them (id, section) without it. Use it when the query names a subject and " +
        "you want its article rather than a list of hits. " +
        cite,
      pooled: searches,
      run(q) {
        const body = answers.lucky({ ...q, format: "chunks" });
        return { structured: luckyWithoutText(body), text: luckyText(body) };
      },
    }),
    tool<typeof Inputs.changes>({
      name: "changes",
      title: "Articles changed since a time",
      description:
        "Lists the articles last changed at or after since (Unix seconds, or an RFC 3339 date-time with a zone such as " +
        "2016-01-31T12:00:00Z; by default 0, every article), oldest change first (by ts_unix, then page_id), each with its page_id, " +
        "title, url, revision and time. Page through them with offset and limit; total says how many there are. Use it to see what " +
        "the snapshot holds or what changed since you last looked (pass the last ts_unix you saw); read an article with get_page. " +
        cite,
      read: { readers: { since: readSince } },
      run: (q) => {
        const since = q.since as number;
        const body = answers.changes({ ...q, since });
        return { structured: body, text: changesText(body, since) };
      },
    }),
  ];
}
