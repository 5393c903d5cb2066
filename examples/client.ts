/**
 * A typed TypeScript client of Tome's REST API, on fetch alone (Bun, Node 18+, Deno, browsers).
 *
 * Run the demo against a running server (`bun run start` prints a key at its first start):
 *
 *     TOME_URL=http://localhost:8080 TOME_API_KEY=wk_... bun examples/client.ts "albedo"
 *
 * Or use the class:
 *
 *     const tome = new TomeClient({ url: "http://localhost:8080", apiKey: "wk_..." });
 *     const { hits } = await tome.search("albedo", { limit: 3 });
 *
 * The response types are the server's own TypeBox schemas, imported as types only: this file has
 * no runtime dependency on the server. Every non-2xx answer throws TomeError with the API's error
 * body (D1). A 429 (rate limit) or 503 (PDF renderer busy) is retried after its Retry-After, a
 * bounded number of times and only when the wait is short; otherwise it throws too.
 */
import type { Static } from "@sinclair/typebox";
import type * as Schemas from "../src/http/schemas";

export type SearchResponse = Static<typeof Schemas.SearchResponse>;
export type PageResponse = Static<typeof Schemas.PageResponse>;
export type ChunkResponse = Static<typeof Schemas.Chunk>;
export type ChangesResponse = Static<typeof Schemas.ChangesResponse>;
export type LuckyResponse = Static<typeof Schemas.LuckyResponse>;
export type LicenseResponse = Static<typeof Schemas.LicenseResponse>;
export type MetaResponse = Static<typeof Schemas.MetaResponse>;
export type SearchHit = Schemas.SearchHit;
/** D1's body, or a limit's (retry_after, quota_*), or a busy renderer's. */
export type ErrorBody = Static<typeof Schemas.ErrorBody> &
  Partial<Omit<Static<typeof Schemas.LimitErrorBody>, "error">>;

export interface SearchOptions {
  limit?: number;
  offset?: number;
  page_id?: number;
  crop_length?: number;
  highlight?: boolean;
}
export interface PageOptions {
  format?: "chunks" | "concat";
  max_chunks?: number;
  offset?: number;
}
export interface ChangesOptions {
  /** Unix seconds, or an RFC 3339 date-time with a zone. */
  since?: number | string | Date;
  limit?: number;
  offset?: number;
}

export interface TomeClientOptions {
  /** Defaults to TOME_URL. */
  url?: string;
  /** Defaults to TOME_API_KEY. */
  apiKey?: string;
  /** Times a 429/503 is retried (default 3). */
  maxRetries?: number;
  /** The longest Retry-After worth waiting for, in seconds (default 10): a spent monthly quota throws. */
  maxRetryWait?: number;
  /** Called before each wait, for logging. */
  onRetry?: (error: TomeError, waitSeconds: number) => void;
  /** Per-request timeout in milliseconds (default 30 000). */
  timeoutMs?: number;
}

/** A non-2xx answer (status, the API's body) or, with status 0, a server that could not be reached. */
export class TomeError extends Error {
  readonly code: string;
  readonly requestId: string | null;
  readonly retryAfter: number | null;

  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Headers = new Headers(),
  ) {
    super(`${status ? `${status} ` : ""}${body.error}: ${body.message}`);
    this.name = "TomeError";
    this.code = body.error;
    this.requestId = headers.get("X-Request-Id");
    const retryAfter = headers.get("Retry-After");
    this.retryAfter = retryAfter !== null && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) : null;
  }
}

type Params = Record<string, string | number | boolean | undefined>;

export class TomeClient {
  readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly maxRetries: number;
  private readonly maxRetryWait: number;
  private readonly onRetry?: (error: TomeError, waitSeconds: number) => void;
  private readonly timeoutMs: number;

  constructor(options: TomeClientOptions = {}) {
    const env: Record<string, string | undefined> = typeof process === "undefined" ? {} : process.env;
    const url = options.url ?? env.TOME_URL;
    if (!url) throw new Error("no server address: pass url or set TOME_URL");
    this.url = url.replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? env.TOME_API_KEY;
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryWait = options.maxRetryWait ?? 10;
    this.onRetry = options.onRetry;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  search(q: string, options: SearchOptions = {}): Promise<SearchResponse> {
    return this.json("/v1/search", { q, ...options });
  }

  page(pageId: number, options: PageOptions = {}): Promise<PageResponse> {
    return this.json(`/v1/page/${pageId}`, { ...options });
  }

  chunk(id: string): Promise<ChunkResponse> {
    return this.json(`/v1/chunk/${encodeURIComponent(id)}`);
  }

  changes(options: ChangesOptions = {}): Promise<ChangesResponse> {
    const since = options.since instanceof Date ? options.since.toISOString() : options.since;
    return this.json("/v1/changes", { ...options, since });
  }

  lucky(q: string, options: { format?: "chunks" | "concat" } = {}): Promise<LuckyResponse> {
    return this.json("/v1/lucky", { q, ...options });
  }

  license(): Promise<LicenseResponse> {
    return this.json("/v1/license");
  }

  meta(): Promise<MetaResponse> {
    return this.json("/v1/meta");
  }

  /** Renders a page as a PDF (10 credits) into the file at `path`; returns the server's file name. */
  async pdf(pageId: number, path: string): Promise<{ path: string; filename: string | null; bytes: number }> {
    const res = await this.request(`/v1/pdf/${pageId}`);
    const body = new Uint8Array(await res.arrayBuffer());
    const { writeFile } = await import("node:fs/promises");
    await writeFile(path, body);
    const filename = /filename="([^"]*)"/.exec(res.headers.get("Content-Disposition") ?? "")?.[1] ?? null;
    return { path, filename, bytes: body.length };
  }

  private async json<T>(path: string, params: Params = {}): Promise<T> {
    return (await this.request(path, params)).json() as Promise<T>;
  }

  private async request(path: string, params: Params = {}): Promise<Response> {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
    const url = this.url + path + (query.size ? `?${query}` : "");
    const headers: Record<string, string> = { Accept: "application/json, application/pdf" };
    if (this.apiKey) headers["X-API-Key"] = this.apiKey;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { headers, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (e) {
        throw new TomeError(0, {
          error: "connection_failed",
          message: `cannot reach ${this.url}: ${(e as Error).message} Is the server running there? Set TOME_URL to its address.`,
        });
      }
      if (res.ok) return res;
      const error = new TomeError(res.status, await errorBody(res), res.headers);
      const wait = error.retryAfter;
      const retryable = (res.status === 429 || res.status === 503) && wait !== null && wait <= this.maxRetryWait;
      if (!retryable || attempt >= this.maxRetries) throw error;
      this.onRetry?.(error, wait);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  }
}

/** The D1 body; a proxy's HTML page or an empty body becomes one too. */
async function errorBody(res: Response): Promise<ErrorBody> {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === "string") return body;
  } catch {}
  return { error: `http_${res.status}`, message: text.trim().slice(0, 200) || res.statusText || "no body" };
}

function headline(query: string, total: number, shown: number): string {
  if (total === 0) return `No page matches "${query}".`;
  const head = total === 1 ? `1 page matches "${query}"` : `${total} pages match "${query}"`;
  return shown < total ? `${head}; the top ${shown}:` : `${head}:`;
}

async function demo(query: string): Promise<void> {
  const tome = new TomeClient();
  const result = await tome.search(query, { limit: 5 });
  console.log(headline(query, result.estimatedTotalHits, result.hits.length));
  result.hits.forEach((hit, i) => {
    console.log(`${i + 1}. ${hit.title}${hit.section ? ` / ${hit.section}` : ""}`);
    console.log(`   ${hit.url} (${hit.license.name}, ${hit.license.url})`);
    console.log(`   revision: ${hit.source.permalink}`);
    const text = hit.text.replaceAll("\n", " ");
    console.log(`   ${text.length > 160 ? `${text.slice(0, 160)}…` : text}`);
  });
  console.log(`\n${result.attribution.attribution_notice}`);
}

if (import.meta.main) {
  // No argument: a demo query. An empty one is sent as given, and the API says what is wrong with it.
  demo(process.argv.length > 2 ? process.argv.slice(2).join(" ") : "albedo").catch((e: Error) => {
    console.error(`error: ${e.message}`);
    process.exit(1);
  });
}
