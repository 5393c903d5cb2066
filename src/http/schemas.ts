/**
 * The API's TypeBox schemas: the one source of request validation (see params.ts), of the
 * handlers' types and of the OpenAPI document. Field names, types and bounds follow api.md
 * sections 2, 4 and 8; the decisions (D…) are in ../shared/spec/decisions.md.
 */
import { Kind, Type as t, TypeRegistry, type Static, type TSchema } from "@sinclair/typebox";

/** D3: integers up to 2^53-1. */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

const Url = t.String({ format: "uri" });

// A string whose length bounds count characters (code points), as JSON Schema's maxLength
// means and D6 asks; TypeBox's own String counts UTF-16 units.
TypeRegistry.Set<{ minLength?: number; maxLength?: number }>("Text", (schema, value) => {
  if (typeof value !== "string") return false;
  const n = [...value].length;
  return n >= (schema.minLength ?? 0) && n <= (schema.maxLength ?? Infinity);
});
const Text = (options: { minLength?: number; maxLength?: number; description?: string; [k: string]: unknown }) =>
  t.Unsafe<string>({ ...options, type: "string", [Kind]: "Text" });
const IsoTime = t.String({ format: "date-time", description: "ISO 8601, UTC" });

// ---- resources (api.md 2) ----

export const License = t.Object(
  {
    name: t.String({ examples: ["CC BY-SA 4.0"] }),
    url: Url,
  },
  { description: "Content license (D15)" },
);

export const FullLicense = t.Object(
  {
    name: t.String({ examples: ["CC BY-SA 4.0"] }),
    full_name: t.String({ examples: ["Creative Commons Attribution-ShareAlike 4.0 International"] }),
    url: Url,
  },
  { description: "Content license with its full name (D15)" },
);

export const Source = t.Object(
  {
    project: t.String({ description: "Host name of the source wiki", examples: ["en.wikipedia.org"] }),
    page_id: t.Integer(),
    revision_id: t.Integer(),
    source_url: Url,
    permalink: t.String({ format: "uri", description: "The page at this revision (D14)" }),
  },
  { description: "Where the text comes from (D14)" },
);

export const Attribution = t.Object(
  {
    license: FullLicense,
    modified: t.Boolean(),
    modifications: t.Array(t.String(), { description: "Transformations applied to the source text" }),
    attribution_notice: t.String({ description: "A sentence a reuser can paste" }),
    wikimedia_terms: Url,
  },
  { description: "How to credit the content (D16)" },
);

const chunkId = t.String({ pattern: "^[0-9]+_[0-9]+$", description: "{page_id}_{chunk_id}", examples: ["39_2"] });
const chunkCore = {
  id: chunkId,
  page_id: t.Integer(),
  title: t.String(),
  section: t.String({ description: "Section heading; empty for the introduction" }),
  text: t.String(),
  chunk_id: t.Integer({ description: "0-based position within the page" }),
};

export const PageChunk = t.Object(chunkCore, { description: "A chunk inside a page response" });

export const SearchHit = t.Object(
  {
    ...chunkCore,
    rev_id: t.Integer(),
    url: Url,
    source: Source,
    license: License,
    _formatted: t.Object(
      {
        title: t.String(),
        text: t.String({ description: "Cropped to crop_length, matches in <em> when highlight=true, HTML-escaped (D9)" }),
      },
      { description: "D9" },
    ),
  },
  { description: "A search hit: the best chunk of a page (D7)" },
);

export const Chunk = t.Object(
  {
    ...chunkCore,
    rev_id: t.Integer(),
    url: Url,
    timestamp: IsoTime,
    source: Source,
    license: FullLicense,
    modified: t.Boolean(),
    modifications: t.Array(t.String()),
  },
  { description: "One chunk" },
);

const pageCore = {
  rev_id: t.Integer(),
  title: t.String(),
  url: Url,
  timestamp: IsoTime,
};

export const Page = t.Object(
  {
    id: t.String({ description: "The page id as a string" }),
    page_id: t.Integer(),
    ...pageCore,
    ts_unix: t.Integer({ description: "Last modification, Unix seconds" }),
    source: Source,
    license: License,
  },
  { description: "A page" },
);

export const LuckyPage = t.Object(
  {
    page_id: t.String({ description: "A string here (api.md 2.2, D13)" }),
    ...pageCore,
    source: Source,
    license: License,
  },
  { description: "The page of a lucky lookup" },
);

export const ChunkWindow = t.Object({
  results: t.Array(PageChunk),
  offset: t.Integer(),
  limit: t.Integer({ description: "The applied max_chunks" }),
  total: t.Integer({ description: "Chunks in the page" }),
});

// ---- responses (api.md 4) ----

export const SearchResponse = t.Object({
  hits: t.Array(SearchHit),
  query: t.String({ description: "The query as given" }),
  processingTimeMs: t.Integer(),
  limit: t.Integer(),
  offset: t.Integer(),
  estimatedTotalHits: t.Integer({ description: "Matching pages; with page_id, matching chunks (D7)" }),
  attribution: Attribution,
});

export const PageResponse = t.Object({
  page: Page,
  chunks: ChunkWindow,
  text: t.Optional(t.String({ description: 'With format=concat: the returned chunks joined by "\\n\\n" (D10)' })),
  attribution: Attribution,
});

export const ChangesResponse = t.Object({
  results: t.Array(Page, { description: "Ordered by ts_unix, then page_id (D12)" }),
  offset: t.Integer(),
  limit: t.Integer(),
  total: t.Integer({ description: "Pages with ts_unix >= since" }),
  attribution: Attribution,
});

export const LuckyResponse = t.Object({
  page: LuckyPage,
  chunks: ChunkWindow,
  text: t.Optional(t.String({ description: "With format=concat (the default)" })),
  search_context: t.Object({
    query: t.String(),
    matched_chunk: SearchHit,
    total_results: t.Integer(),
    search_time_ms: t.Integer(),
  }),
  attribution: Attribution,
  processingTimeMs: t.Integer(),
});

export const LicenseResponse = t.Object({
  content_license: t.Object({ name: t.String(), full_name: t.String(), url: Url, summary: t.String() }),
  source: t.Object({ name: t.String(), project: t.String(), terms_url: Url, reuse_info: t.String() }),
  modifications: t.Object({ modified: t.Boolean(), changes_made: t.Array(t.String()), note: t.String() }),
  attribution_requirements: t.Object({
    credit: t.String(),
    license_notice: t.String(),
    changes: t.String(),
    share_alike: t.String(),
    no_additional_restrictions: t.String(),
  }),
  api_service_note: t.String(),
  trademark_disclaimer: t.String(),
});

export const MetaResponse = t.Object({
  search_engine_version: t.Object(
    {
      commitSha: t.String({ description: "sha256 of the loaded snapshot's content" }),
      commitDate: t.String({ format: "date-time", description: "When the snapshot was built" }),
      pkgVersion: t.String({ description: "Version of the search library" }),
    },
    { description: "D17" },
  ),
  indexes: t.Object({ pages: t.String(), chunks: t.String() }),
  content_source: t.Object({ name: t.String(), project: t.String(), license: FullLicense }),
  dataset: t.Optional(
    t.Object({
      created_at: IsoTime,
      indexed_pages: t.Integer(),
      indexed_chunks: t.Integer(),
      skipped_redirects: t.Integer(),
    }),
  ),
  attribution: Attribution,
});

export const Health = t.Object({
  status: t.Union([t.Literal("ok"), t.Literal("degraded")], { description: "ok, or degraded: the server answers, but something needs an operator (see problems)" }),
  problems: t.Optional(t.Array(t.String(), { description: "What is wrong, one sentence each" })),
});

// ---- errors (D1) ----

export const ErrorBody = t.Object(
  {
    error: t.String({ description: "api.md's error text, or invalid_parameter (D1)" }),
    message: t.String(),
    details: t.Optional(
      t.Object({
        parameter: t.String(),
        value: t.String(),
        constraint: t.String(),
      }),
    ),
  },
  { description: "Error (D1)" },
);

export const LimitErrorBody = t.Object(
  {
    error: t.Union([t.Literal("rate_limit_exceeded"), t.Literal("quota_exceeded")]),
    message: t.String(),
    retry_after: t.Integer({ description: "Whole seconds to wait, as Retry-After" }),
    quota_limit: t.Optional(t.Integer({ description: "quota_exceeded: the month's credits" })),
    quota_used: t.Optional(t.Integer({ description: "quota_exceeded: credits spent this month" })),
  },
  { description: "A limit reached (D19, D20)" },
);

// ---- requests ----

function int(minimum: number, maximum: number, def: number, description: string): ReturnType<typeof t.Integer> & { default: number };
function int(minimum: number, maximum: number, def: undefined, description: string): ReturnType<typeof t.Integer>;
function int(minimum: number, maximum: number, def: number | undefined, description: string) {
  return t.Integer(def === undefined ? { minimum, maximum, description } : { minimum, maximum, default: def, description });
}

export const SearchQuery = t.Object({
  q: Text({ minLength: 1, maxLength: 500, "x-trimmed": true, description: "Search query, trimmed (D6): 1 to 500 characters. Text in double quotes is a phrase." }),
  limit: t.Optional(int(1, 50, 10, "Hits per page")),
  offset: t.Optional(int(0, 1_000_000, 0, "Hits to skip")),
  page_id: t.Optional(int(0, MAX_INTEGER, undefined, "Only this page's chunks, each a hit (D7)")),
  crop_length: t.Optional(int(50, 2000, 400, "Length of _formatted.text in characters (D9)")),
  highlight: t.Optional(t.Boolean({ default: true, description: "true|false|1|0, any case (D4)" }) as ReturnType<typeof t.Boolean> & { default: boolean }),
});

const Format = (def: "chunks" | "concat") =>
  t.Union([t.Literal("chunks"), t.Literal("concat")], { default: def, description: "chunks, or concat for one text field (D5, D10)" }) as ReturnType<
    typeof t.Union<[ReturnType<typeof t.Literal<"chunks">>, ReturnType<typeof t.Literal<"concat">>]>
  > & { default: string };

export const PageParams = t.Object({ page_id: int(0, MAX_INTEGER, undefined, "Page id (base-10 digits)") });

export const PageQuery = t.Object({
  format: t.Optional(Format("chunks")),
  max_chunks: t.Optional(int(1, 200_000, 10_000, "Chunks to return")),
  offset: t.Optional(int(0, MAX_INTEGER, 0, "Chunks to skip")),
});

export const ChunkParams = t.Object({ id: chunkId });

export const ChangesQuery = t.Object({
  since: t.Optional(
    t.Union([t.Integer({ minimum: 0, maximum: MAX_INTEGER }), t.String({ format: "date-time" })], {
      default: 0,
      description: "Unix seconds (digits) or an RFC 3339 date-time with a zone (D12)",
    }) as ReturnType<typeof t.Union<[ReturnType<typeof t.Integer>, ReturnType<typeof t.String>]>> & { default: number },
  ),
  limit: t.Optional(int(1, 1000, 100, "Pages per response")),
  offset: t.Optional(int(0, MAX_INTEGER, 0, "Pages to skip")),
});

export const LuckyQuery = t.Object({
  q: SearchQuery.properties.q,
  format: t.Optional(Format("concat")),
});

export type SearchQuery = Static<typeof SearchQuery>;
export type PageQuery = Static<typeof PageQuery>;
export type ChangesQuery = Static<typeof ChangesQuery>;
export type LuckyQuery = Static<typeof LuckyQuery>;
export type Attribution = Static<typeof Attribution>;
export type Source = Static<typeof Source>;
export type SearchHit = Static<typeof SearchHit>;
export type PageChunk = Static<typeof PageChunk>;
export type Chunk = Static<typeof Chunk>;
export type Page = Static<typeof Page>;
export type LuckyPage = Static<typeof LuckyPage>;
export type LicenseResponse = Static<typeof LicenseResponse>;
export type MetaResponse = Static<typeof MetaResponse>;
export type ErrorBody = Static<typeof ErrorBody>;
export type Health = Static<typeof Health>;
export type AnySchema = TSchema;
