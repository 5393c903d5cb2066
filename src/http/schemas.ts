/**
 * The API's TypeBox schemas: the one source of request validation (see params.ts), of the
 * handlers' types and of the OpenAPI document (their descriptions and examples are what its
 * readers see). Field names, types and bounds follow api.md sections 2, 4 and 8; the decisions
 * (D…) are in docs/decisions/.
 */
import { Kind, Type as t, TypeRegistry, type Static, type TSchema } from "@sinclair/typebox";
import { codePoints } from "../scripts";
import { DEFAULTS, GUARDS } from "../search";
import { ERRORS } from "./errors";
import { EXAMPLE } from "./examples";

/** D3: integers up to 2^53-1. */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** api.md 4.2's max_chunks default: a page's chunks when none is given, and all lucky's page returns (api.md 4.5). */
export const MAX_CHUNKS_DEFAULT = 10_000;

const Url = (example: string, description?: string) =>
  t.String({ format: "uri", ...(description ? { description } : {}), examples: [example] });
const PageId = t.Integer({ description: "Page id in the source wiki", examples: [EXAMPLE.page.page_id] });
const RevId = t.Integer({ description: "Revision id of the page's text", examples: [EXAMPLE.page.rev_id] });
const Title = t.String({ description: "Article title", examples: [EXAMPLE.page.title] });
const ArticleUrl = Url(EXAMPLE.page.url, "The article's address");
const Modifications = t.Array(t.String(), {
  description: "The transformations applied to the source text",
  examples: [EXAMPLE.attribution.modifications],
});

// A string whose length bounds count characters (code points), as JSON Schema's maxLength
// means and D6 asks; TypeBox's own String counts UTF-16 units.
TypeRegistry.Set<{ minLength?: number; maxLength?: number }>("Text", (schema, value) => {
  if (typeof value !== "string") return false;
  const n = codePoints(value);
  return n >= (schema.minLength ?? 0) && n <= (schema.maxLength ?? Infinity);
});
const Text = (options: { minLength?: number; maxLength?: number; description?: string; [k: string]: unknown }) =>
  t.Unsafe<string>({ ...options, type: "string", [Kind]: "Text" });
const IsoTime = t.String({
  format: "date-time",
  description: "Last modification, ISO 8601, UTC",
  examples: [EXAMPLE.page.timestamp],
});

// ---- resources (api.md 2) ----

const licenseName = t.String({ description: "The license's short name", examples: [EXAMPLE.license.name] });
const licenseFullName = t.String({ description: "The license's full name", examples: [EXAMPLE.license.full_name] });
const licenseUrl = Url(EXAMPLE.license.url, "The license's text");

export const License = t.Object(
  { name: licenseName, url: licenseUrl },
  { description: "The content's license: always CC BY-SA 4.0" },
);

export const FullLicense = t.Object(
  { name: licenseName, full_name: licenseFullName, url: licenseUrl },
  { description: "The content's license, with its full name" },
);

const Project = t.String({ description: "Host name of the source wiki", examples: [EXAMPLE.source.project] });

export const Source = t.Object(
  {
    project: Project,
    page_id: PageId,
    revision_id: RevId,
    source_url: ArticleUrl,
    permalink: Url(EXAMPLE.source.permalink, "The page at this exact revision"),
  },
  { description: "Where the text comes from" },
);

const WikimediaTerms = Url(EXAMPLE.attribution.wikimedia_terms, "The Wikimedia Foundation's terms of use");

export const Attribution = t.Object(
  {
    license: FullLicense,
    modified: t.Boolean({ description: "Always true: the text is not the source's markup", examples: [true] }),
    modifications: Modifications,
    attribution_notice: t.String({
      description:
        "A sentence a reuser can paste: for one page it names the article and its address; for lists it says each result links to its source",
      examples: [EXAMPLE.attribution.attribution_notice],
    }),
    wikimedia_terms: WikimediaTerms,
  },
  { description: "How to credit the content" },
);

/** A chunk id as answers carry it: `{page_id}_{chunk_id}`. */
const chunkId = t.String({
  pattern: "^[0-9]+_[0-9]+$",
  description: "{page_id}_{chunk_id}",
  examples: [EXAMPLE.chunk.id],
});

/** The base-10 integers from 0 to max as a regular expression, leading zeros allowed (D3: digits, within bounds). */
function integersUpTo(max: number): string {
  const digits = String(max);
  const shorter = `[0-9]{1,${digits.length - 1}}`;
  // As long as max: its first i digits, then a smaller digit, then any.
  const below = [...digits].flatMap((d, i) => {
    if (d === "0") return [];
    const rest = digits.length - i - 1;
    const any = rest === 0 ? "" : rest === 1 ? "[0-9]" : `[0-9]{${rest}}`;
    return [`${digits.slice(0, i)}${d === "1" ? "0" : `[0-${Number(d) - 1}]`}${any}`];
  });
  return `0*(?:${[shorter, ...below, digits].join("|")})`;
}

/**
 * A chunk id as a request names it (D11): two integers of D3 (at most 2^53 - 1) and the "_" between. A part past
 * 2^53 - 1 is refused (400), as /v1/page/{page_id} refuses it, not looked for (404); so is an id longer than two
 * 16-digit integers, rather than echoed whole in a 404's message (100 KB of digits came back as 100 KB).
 */
const requestedChunkId = t.String({
  pattern: `^${integersUpTo(MAX_INTEGER)}_${integersUpTo(MAX_INTEGER)}$`,
  maxLength: 2 * String(MAX_INTEGER).length + 1,
  description: `{page_id}_{chunk_id}, each an integer from 0 to ${MAX_INTEGER}`,
  examples: [EXAMPLE.chunk.id],
});

const chunkCore = {
  id: chunkId,
  page_id: PageId,
  title: Title,
  section: t.String({ description: "Section heading; empty for the introduction", examples: [EXAMPLE.chunk.section] }),
  text: t.String({
    description: "The passage's plain text, paragraphs separated by a blank line",
    examples: [EXAMPLE.chunk.text],
  }),
  chunk_id: t.Integer({ description: "0-based position within the page", examples: [EXAMPLE.chunk.chunk_id] }),
};

export const PageChunk = t.Object(chunkCore, { description: "A chunk inside a page response" });

export const SearchHit = t.Object(
  {
    ...chunkCore,
    rev_id: RevId,
    url: ArticleUrl,
    source: Source,
    license: License,
    _formatted: t.Object(
      {
        title: t.String({
          description: "The title, matches in `<em>` when highlight=true, HTML-escaped",
          examples: [EXAMPLE.formatted.title],
        }),
        text: t.String({
          description:
            "The text cropped to crop_length characters around the densest run of matches, cut at word boundaries with … where cut; " +
            "matches in `<em>` when highlight=true; HTML-escaped, so safe to insert as HTML",
          examples: [EXAMPLE.formatted.text],
        }),
      },
      { description: "The hit's title and text for display" },
    ),
    _rankingScore: t.Optional(
      t.Number({
        minimum: 0,
        maximum: 1,
        description:
          "With show_ranking_score=true: how well the hit matches, from 0 to 1, as Meilisearch's _rankingScore. It never rises down the list, " +
          "and is comparable across queries: the share of the query's words the hit holds counts most, then how strongly (a saturated BM25 score)",
        examples: [0.93],
      }),
    ),
  },
  {
    description:
      "A search hit: a page's passage, its lead when the query names the page, else its best-matching chunk (with page_id, one matching chunk of that page)",
  },
);

export const Chunk = t.Object(
  {
    ...chunkCore,
    rev_id: RevId,
    url: ArticleUrl,
    timestamp: IsoTime,
    source: Source,
    license: FullLicense,
    modified: t.Boolean({ description: "Always true: the text is not the source's markup", examples: [true] }),
    modifications: Modifications,
  },
  { description: "One chunk, with its source, license and modifications" },
);

const pageCore = {
  rev_id: RevId,
  title: Title,
  url: ArticleUrl,
  timestamp: IsoTime,
};

export const Page = t.Object(
  {
    id: t.String({ description: "The page id as a string", examples: [String(EXAMPLE.page.page_id)] }),
    page_id: PageId,
    ...pageCore,
    ts_unix: t.Integer({ description: "Last modification, Unix seconds", examples: [EXAMPLE.page.ts_unix] }),
    source: Source,
    license: License,
  },
  { description: "A page" },
);

export const LuckyPage = t.Object(
  {
    page_id: t.String({
      description: "The page id, as a string in this response",
      examples: [String(EXAMPLE.page.page_id)],
    }),
    ...pageCore,
    source: Source,
    license: License,
  },
  { description: "The page of a lucky lookup" },
);

const count = (description: string, example: number) => t.Integer({ description, examples: [example] });

export const ChunkWindow = t.Object(
  {
    results: t.Array(PageChunk),
    offset: count("Chunks skipped", 0),
    limit: count("The applied max_chunks", MAX_CHUNKS_DEFAULT),
    total: count("Chunks in the page", EXAMPLE.chunk.chunks_in_page),
  },
  { description: "A window of a page's chunks, in order" },
);

// ---- responses (api.md 4) ----

const processingTimeMs = count("Time the server took, in milliseconds", 3);
/** D91: a search cut off at its time limit answers with what it had found, and says so. */
const timedOut = (what: string) =>
  t.Boolean({
    description: `${what} reached its time limit and answers with the best it had found by then: true is rare, and a retry may find more`,
    examples: [false],
  });
const concatText = t.String({
  description: 'With format=concat: the text of the returned chunks joined by a blank line ("\\n\\n")',
  examples: [EXAMPLE.chunk.text],
});

export const SearchResponse = t.Object({
  hits: t.Array(SearchHit),
  query: t.String({ description: "The query as given", examples: [EXAMPLE.query] }),
  processingTimeMs,
  limit: count("Hits per page", DEFAULTS.limit),
  offset: count("Hits skipped", 0),
  estimatedTotalHits: count("Matching pages; with page_id, matching chunks of that page", EXAMPLE.total_hits),
  timedOut: timedOut("The search"),
  attribution: Attribution,
});

export const PageResponse = t.Object({
  page: Page,
  chunks: ChunkWindow,
  text: t.Optional(concatText),
  attribution: Attribution,
});

export const ChangesResponse = t.Object({
  results: t.Array(Page, { description: "Ordered by ts_unix, then page_id" }),
  offset: count("Pages skipped", 0),
  limit: count("Pages per response", 100),
  total: count("Pages with ts_unix >= since", 67),
  attribution: Attribution,
});

export const LuckyResponse = t.Object({
  page: LuckyPage,
  chunks: ChunkWindow,
  text: t.Optional(concatText),
  search_context: t.Object(
    {
      query: t.String({ description: "The query as given", examples: [EXAMPLE.query] }),
      matched_chunk: SearchHit,
      total_results: count("Pages matching the query, as a search's estimatedTotalHits", EXAMPLE.total_hits),
      search_time_ms: count("Time the search took, in milliseconds", 2),
      timed_out: timedOut("The search that chose the page"),
    },
    { description: "The search that chose the page" },
  ),
  attribution: Attribution,
  processingTimeMs,
});

const text = (description: string, example: string) => t.String({ description, examples: [example] });
const doc = EXAMPLE.licenseDocument;

export const LicenseResponse = t.Object({
  content_license: t.Object({
    name: licenseName,
    full_name: licenseFullName,
    url: licenseUrl,
    summary: text("What the license allows and asks, in brief", EXAMPLE.license.summary),
  }),
  source: t.Object({
    name: text("The source wiki's name", doc.source.name),
    project: Project,
    terms_url: WikimediaTerms,
    reuse_info: Url(doc.source.reuse_info, "The source's own guide to reusing its content"),
  }),
  modifications: t.Object({
    modified: t.Boolean({ description: "Always true", examples: [true] }),
    changes_made: Modifications,
    note: text("What the modifications do and do not change", doc.note),
  }),
  attribution_requirements: t.Object(
    {
      credit: text("Whom to credit and how", doc.attribution_requirements.credit),
      license_notice: text("Which license to name", doc.attribution_requirements.license_notice),
      changes: text("Which changes to state", doc.attribution_requirements.changes),
      share_alike: text("How to license adaptations", doc.attribution_requirements.share_alike),
      no_additional_restrictions: text("What not to add", doc.attribution_requirements.no_additional_restrictions),
    },
    { description: "What a reuser must do" },
  ),
  api_service_note: text("How the service's terms relate to the content's license", doc.api_service_note),
  trademark_disclaimer: text("The trademark notice", doc.trademark_disclaimer),
});

const meta = EXAMPLE.meta;

export const MetaResponse = t.Object({
  search_engine_version: t.Object(
    {
      commitSha: text("sha256 of the loaded snapshot's content: it names the index build", meta.commitSha),
      commitDate: t.String({
        format: "date-time",
        description: "When the snapshot was built",
        examples: [meta.commitDate],
      }),
      pkgVersion: text("Version of Tome, whose own engine answers the searches", meta.pkgVersion),
    },
    { description: "The loaded index build" },
  ),
  indexes: t.Object(
    { pages: text("The pages index", meta.indexes.pages), chunks: text("The chunks index", meta.indexes.chunks) },
    { description: "The loaded indexes" },
  ),
  content_source: t.Object({
    name: text("The source wiki's name", doc.source.name),
    project: Project,
    license: FullLicense,
  }),
  dataset: t.Optional(
    t.Object(
      {
        created_at: t.String({
          format: "date-time",
          description: "When the snapshot was built",
          examples: [meta.commitDate],
        }),
        indexed_pages: count("Pages in the snapshot", meta.dataset.indexed_pages),
        indexed_chunks: count("Chunks in the snapshot", meta.dataset.indexed_chunks),
        skipped_redirects: count(
          "Redirect pages read from the dump and kept only as alternative titles",
          meta.dataset.skipped_redirects,
        ),
        snapshot: text(
          "The snapshot file served (its name; the server moves to a newer one when it appears)",
          meta.dataset.snapshot,
        ),
        loaded_at: t.String({
          format: "date-time",
          description: "When the server loaded this snapshot (at its start, or when it moved to it)",
          examples: [meta.dataset.loaded_at],
        }),
      },
      { description: "The loaded snapshot" },
    ),
  ),
  attribution: Attribution,
});

export const Health = t.Object({
  status: t.Union([t.Literal("ok"), t.Literal("degraded")], {
    description: "ok, or degraded: the server answers, but something needs an operator (see problems)",
  }),
  problems: t.Optional(
    t.Array(t.String(), {
      description: "What is wrong, one sentence each",
      examples: [
        [
          "the key store cannot be read since 2026-11-23T08:00:00.000Z: the server serves the keys it last read (see its log)",
        ],
      ],
    }),
  ),
});

// ---- errors (D1) ----

export { ErrorBody } from "./errors";

export const LimitErrorBody = t.Object(
  {
    error: t.Union([t.Literal(ERRORS.rateLimitExceeded.code), t.Literal(ERRORS.quotaExceeded.code)]),
    message: t.String({
      description: "What went wrong and when to retry",
      examples: ["Too many requests: this key's plan allows 10 per second. Retry after 1 s."],
    }),
    retry_after: t.Integer({ description: "Whole seconds to wait, as Retry-After", examples: [1] }),
    quota_limit: t.Optional(t.Integer({ description: "With quota_exceeded: the month's credits", examples: [5000] })),
    quota_used: t.Optional(
      t.Integer({ description: "With quota_exceeded: credits spent this month", examples: [4995] }),
    ),
  },
  { description: "A limit reached: the key's requests per second, or the account's credits for the month" },
);

export const UnavailableBody = t.Object(
  {
    error: t.Literal(ERRORS.serviceUnavailable.code),
    message: t.String({ examples: ["Too many PDFs are being rendered; nothing was charged. Retry after 4 s."] }),
    retry_after: t.Integer({ description: "Whole seconds to wait, as Retry-After", examples: [4] }),
  },
  { description: "The server is too busy for this request now; nothing was charged" },
);

// ---- requests ----

/**
 * The schema with a default, which its type states too (TypeBox's types leave options out):
 * params.ts's Filled then makes the property required once read.
 */
function withDefault<T extends TSchema, D extends Static<T>>(schema: T, value: D): T & { default: D } {
  return Object.assign(schema, { default: value });
}

function int(
  minimum: number,
  maximum: number,
  def: number,
  description: string,
): ReturnType<typeof t.Integer> & { default: number };
function int(minimum: number, maximum: number, def: undefined, description: string): ReturnType<typeof t.Integer>;
function int(minimum: number, maximum: number, def: number | undefined, description: string) {
  const schema = t.Integer({ minimum, maximum, description });
  return def === undefined ? schema : withDefault(schema, def);
}

export const SearchQuery = t.Object({
  q: Text({
    minLength: 1,
    maxLength: GUARDS.maxQueryChars,
    "x-trimmed": true,
    description: `Search query: 1 to ${GUARDS.maxQueryChars} characters, leading and trailing spaces ignored. Text in double quotes must match as a phrase.`,
    examples: [EXAMPLE.query],
  }),
  limit: t.Optional(int(1, 50, DEFAULTS.limit, "Hits per page")),
  offset: t.Optional(int(0, 1_000_000, DEFAULTS.offset, "Hits to skip")),
  page_id: t.Optional(int(0, MAX_INTEGER, undefined, "Search only this page: its matching chunks, each a hit")),
  crop_length: t.Optional(int(50, 2000, DEFAULTS.cropLength, "Length of `_formatted.text` in characters")),
  highlight: t.Optional(
    withDefault(
      t.Boolean({ description: "Wrap matches in `<em>` in `_formatted`: true, false, 1 or 0, any case" }),
      DEFAULTS.highlight,
    ),
  ),
  show_ranking_score: t.Optional(
    withDefault(
      t.Boolean({
        description: "Add `_rankingScore` (0 to 1, higher is better) to each hit: true, false, 1 or 0, any case",
      }),
      false,
    ),
  ),
});

const Format = (def: "chunks" | "concat") =>
  withDefault(
    t.Union([t.Literal("chunks"), t.Literal("concat")], {
      description: "chunks, or concat to add the chunks' text joined in one text field",
    }),
    def,
  );

/** A page id in a path: /v1/page/{page_id}, /v1/pdf/{page_id}. */
const pathPageId = t.Integer({
  minimum: 0,
  maximum: MAX_INTEGER,
  description: "Page id (base-10 digits)",
  examples: [EXAMPLE.page.page_id],
});

export const PageParams = t.Object({ page_id: pathPageId });

/** The PDF's page id: as PageParams, read with or without ".pdf" (routes/pdf.ts's reader). */
export const PdfParams = t.Object({ page_id: pathPageId });

export const PageQuery = t.Object({
  format: t.Optional(Format("chunks")),
  max_chunks: t.Optional(int(1, 200_000, MAX_CHUNKS_DEFAULT, "Chunks to return")),
  offset: t.Optional(int(0, MAX_INTEGER, 0, "Chunks to skip")),
});

export const ChunkParams = t.Object({ id: requestedChunkId });

export const ChangesQuery = t.Object({
  since: t.Optional(
    withDefault(
      t.Union([t.Integer({ minimum: 0, maximum: MAX_INTEGER }), t.String({ format: "date-time" })], {
        description:
          "Unix seconds (digits) or an RFC 3339 date-time with a zone (Z or ±hh:mm); pages changed at or after it",
        examples: [EXAMPLE.since],
      }),
      0,
    ),
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
export type Health = Static<typeof Health>;
