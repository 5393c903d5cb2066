/**
 * An article streamed to onArticle, as ingest's result lists it afterwards: its id, revision
 * and time, its title read from its claim and its timestamp made only when asked for, no
 * sections or chunks. A build lists millions of them at its end and reads only id and revision.
 */
import type { Article } from "./article";
import type { Chunk, SectionHead } from "./chunk";
import type { ClaimTable } from "./claim-table";

const NO_SECTIONS: SectionHead[] = Object.freeze([]) as unknown as SectionHead[];
const NO_CHUNKS: Chunk[] = Object.freeze([]) as unknown as Chunk[];

export class StreamedArticle implements Article {
  readonly pageId: number;
  readonly revId: number;
  readonly tsUnix: number;
  readonly sections = NO_SECTIONS;
  readonly chunks = NO_CHUNKS;
  readonly wikitextLength = 0;
  constructor(
    private readonly claims: ClaimTable,
    private readonly row: number,
  ) {
    this.pageId = claims.pageIdOf(row);
    this.revId = claims.revOf(row);
    this.tsUnix = claims.version(row).tsUnix;
  }
  get title(): string {
    return this.claims.title(this.row);
  }
  get timestamp(): string {
    return new Date(this.tsUnix * 1000).toISOString().replace(/\.000Z$/, "Z");
  }
  toJSON(): Article {
    const { pageId, revId, title, timestamp, tsUnix, sections, chunks, wikitextLength } = this;
    return { pageId, revId, title, timestamp, tsUnix, sections, chunks, wikitextLength };
  }
}
