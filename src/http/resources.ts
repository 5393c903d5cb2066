/**
 * Snapshot pages and search hits as the API's resources (api.md 2). One instance per loaded
 * snapshot: it knows the wiki's host (D14) and its attribution (D16).
 */
import { cutForPdf, PDF_MAX_CHARACTERS, type PdfArticle } from "../pdf";
import type { Hit } from "../search";
import type { SnapshotMeta, SnapshotPage } from "../snapshot";
import { articleUrl, type Attributions, LICENSE, SHORT_LICENSE, sourceOf } from "./attribution";
import type { Chunk, LuckyPage, Page, PageChunk, SearchHit } from "./schemas";

/** How many pages' PDF articles are kept (each at most PDF_MAX_CHARACTERS of text, about 1 MB). */
const KEPT_PDF_ARTICLES = 8;

export class Resources {
  readonly attributions: Attributions;
  /**
   * The PDF articles of the pages asked for last, as cut for their bound: an article made anew is a new object, whose
   * key (a hash of all its text) and length would be made again on every GET and HEAD of its page; kept, once.
   */
  private readonly pdfArticles = new Map<number, { max: number; article: PdfArticle }>();

  constructor(
    readonly meta: SnapshotMeta,
    attributions: Attributions,
  ) {
    this.attributions = attributions;
  }

  get project(): string {
    return this.meta.wiki.host;
  }

  url(page: SnapshotPage): string {
    return articleUrl(this.project, page.title);
  }

  page(page: SnapshotPage): Page {
    const url = this.url(page);
    return {
      id: String(page.pageId),
      page_id: page.pageId,
      rev_id: page.revId,
      title: page.title,
      url,
      timestamp: page.timestamp,
      ts_unix: page.tsUnix,
      source: sourceOf(this.project, page, url),
      license: SHORT_LICENSE,
    };
  }

  luckyPage(page: SnapshotPage): LuckyPage {
    const url = this.url(page);
    return {
      page_id: String(page.pageId),
      title: page.title,
      url,
      rev_id: page.revId,
      timestamp: page.timestamp,
      source: sourceOf(this.project, page, url),
      license: SHORT_LICENSE,
    };
  }

  /** The chunks [offset, offset + limit) of a page, in page-response shape. */
  chunks(page: SnapshotPage, offset: number, limit: number): PageChunk[] {
    const end = Math.min(page.chunks.length, offset + limit);
    const out: PageChunk[] = [];
    for (let i = offset; i < end; i++) {
      const c = page.chunks[i]!;
      out.push({
        id: `${page.pageId}_${i}`,
        page_id: page.pageId,
        title: page.title,
        section: page.sections[c.section]?.heading ?? "",
        text: c.text,
        chunk_id: i,
      });
    }
    return out;
  }

  chunk(page: SnapshotPage, index: number): Chunk {
    const c = page.chunks[index]!;
    return {
      ...this.located(page, index, page.sections[c.section]?.heading ?? "", c.text),
      timestamp: page.timestamp,
      license: LICENSE,
      modified: true,
      modifications: this.attributions.modifications,
    };
  }

  /** The fields a search hit and a single chunk share: the chunk, its revision and where it comes from. */
  private located(page: SnapshotPage, index: number, section: string, text: string) {
    const url = this.url(page);
    return {
      id: `${page.pageId}_${index}`,
      page_id: page.pageId,
      rev_id: page.revId,
      title: page.title,
      section,
      text,
      chunk_id: index,
      url,
      source: sourceOf(this.project, page, url),
    };
  }

  /** The page as the PDF shows it, cut at `max` characters of text (cutForPdf, D182). */
  pdfArticle(page: SnapshotPage, max = PDF_MAX_CHARACTERS): PdfArticle {
    const known = this.pdfArticles.get(page.pageId);
    this.pdfArticles.delete(page.pageId);
    const article = known?.max === max ? known.article : cutForPdf(this.wholePdfArticle(page), max);
    this.pdfArticles.set(page.pageId, { max, article });
    for (const oldest of this.pdfArticles.keys())
      if (this.pdfArticles.size > KEPT_PDF_ARTICLES) this.pdfArticles.delete(oldest);
    return article;
  }

  /** The whole page for the PDF: sections in order (headings of empty ones too), chunks cut back into paragraphs. */
  private wholePdfArticle(page: SnapshotPage): PdfArticle {
    const sections = page.sections.map((s) => ({ heading: s.heading, level: s.level, paragraphs: [] as string[] }));
    for (const c of page.chunks) sections[c.section]?.paragraphs.push(...c.text.split("\n\n"));
    const url = this.url(page);
    return {
      pageId: page.pageId,
      revId: page.revId,
      title: page.title,
      lang: this.meta.wiki.lang,
      sitename: this.meta.wiki.sitename || "Wikipedia",
      project: this.project,
      url,
      permalink: sourceOf(this.project, page, url).permalink,
      timestamp: page.timestamp,
      retrievedAt: this.meta.createdAt,
      sections,
      license: LICENSE,
      modifications: this.attributions.modifications,
    };
  }

  /** `rankingScore`: with the hit's _rankingScore (show_ranking_score). */
  hit(hit: Hit, rankingScore = false): SearchHit {
    const shown: SearchHit = {
      ...this.located(hit.page, hit.chunk, hit.section, hit.text),
      license: SHORT_LICENSE,
      _formatted: hit.formatted,
    };
    if (rankingScore) shown._rankingScore = hit.rankingScore;
    return shown;
  }
}
