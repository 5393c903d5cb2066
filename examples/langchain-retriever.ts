/**
 * A LangChain.js retriever over Tome: `TomeRetriever` turns a query into the best chunks of the
 * best pages, as Documents an application can cite.
 *
 * Run the demo against a running server (`bun run start` prints a key at its first start):
 *
 *     TOME_URL=http://localhost:8080 TOME_API_KEY=wk_... bun examples/langchain-retriever.ts "albedo of snow"
 *
 * In a chain, use it as any retriever: `const docs = await new TomeRetriever({ k: 4 }).invoke(question)`.
 * Each Document's pageContent is a chunk's whole text; its metadata says where the text comes from
 * and how to credit it: the content is CC BY-SA 4.0, and an answer built on it must say so.
 */
import { Document } from "@langchain/core/documents";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { TomeClient, type SearchHit, type TomeClientOptions } from "./client";

export interface TomeDocumentMetadata {
  /** The chunk's id, `{page_id}_{chunk_id}`: `tome.chunk(id)` fetches it again. */
  id: string;
  page_id: number;
  chunk_id: number;
  title: string;
  /** Empty for the introduction. */
  section: string;
  /** The article's address. */
  url: string;
  /** The article at the revision the text comes from. */
  permalink: string;
  rev_id: number;
  license: { name: string; url: string };
  /** A sentence to show with anything built on this text. */
  attribution: string;
  /** What Tome changed in the source text (the license asks to say so). */
  modifications: string[];
  [key: string]: unknown;
}

export interface TomeRetrieverInput extends BaseRetrieverInput, TomeClientOptions {
  /** Documents per query, 1 to 50 (default 4): one per page, that page's best chunk. */
  k?: number;
  /** An existing client, instead of url/apiKey. */
  client?: TomeClient;
}

export class TomeRetriever extends BaseRetriever<TomeDocumentMetadata> {
  static override lc_name() {
    return "TomeRetriever";
  }

  lc_namespace = ["tome", "retrievers"];

  private readonly client: TomeClient;
  private readonly k: number;

  constructor(fields: TomeRetrieverInput = {}) {
    super(fields);
    this.client = fields.client ?? new TomeClient(fields);
    this.k = fields.k ?? 4;
  }

  override async _getRelevantDocuments(query: string): Promise<Document<TomeDocumentMetadata>[]> {
    const { hits, attribution } = await this.client.search(query, { limit: this.k, highlight: false });
    return hits.map(
      (hit) =>
        new Document({ pageContent: hit.text, metadata: metadataOf(hit, attribution.modifications), id: hit.id }),
    );
  }
}

function metadataOf(hit: SearchHit, modifications: string[]): TomeDocumentMetadata {
  const { license, source } = hit;
  return {
    id: hit.id,
    page_id: hit.page_id,
    chunk_id: hit.chunk_id,
    title: hit.title,
    section: hit.section,
    url: hit.url,
    permalink: source.permalink,
    rev_id: hit.rev_id,
    license: { name: license.name, url: license.url },
    attribution:
      `"${hit.title}" from ${source.project} (${hit.url}, revision ${source.permalink}), by its contributors, ` +
      `under ${license.name} (${license.url}). The text was modified: see modifications.`,
    modifications,
  };
}

if (import.meta.main) {
  const question = process.argv.slice(2).join(" ") || "albedo of snow";
  // Made inside the chain: without TOME_URL the constructor throws, and that too is one line, not a stack trace.
  const docs = await Promise.resolve()
    .then(() => new TomeRetriever({ k: 3 }).invoke(question))
    .catch((e: Error) => {
      console.error(`error: ${e.message}`);
      process.exit(1);
    });
  for (const doc of docs) {
    const { title, section, url } = doc.metadata;
    console.log(
      `# ${title}${section ? ` / ${section}` : ""} (${url})\n${doc.pageContent.slice(0, 300)}…\n— ${doc.metadata.attribution}\n`,
    );
  }
}
