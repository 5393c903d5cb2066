/**
 * Source, license and attribution (D14–D16) and the license document (api.md 4.7). The text
 * is CC BY-SA 4.0 and stays so; these objects tell a reuser how to credit it.
 */
import type { SnapshotMeta } from "../snapshot";
import type { Attribution, LicenseResponse, Source } from "./schemas";

export const LICENSE = {
  name: "CC BY-SA 4.0",
  full_name: "Creative Commons Attribution-ShareAlike 4.0 International",
  url: "https://creativecommons.org/licenses/by-sa/4.0/",
} as const;

/** D15: `full_name` only where api.md lists it. */
export const SHORT_LICENSE = { name: LICENSE.name, url: LICENSE.url } as const;

const WIKIMEDIA_TERMS = "https://foundation.wikimedia.org/wiki/Terms_of_Use";

// MediaWiki's wfUrlencode: rawurlencode, then these are left readable.
const KEPT = /%(3B|40|24|21|2A|28|29|2C|2F|7E|3A)/g;

/** Titles that the encoding below leaves as they are, spaces aside: ASCII letters, digits, - . _ ~ and what KEPT gives back. */
const PLAIN_TITLE = /^[A-Za-z0-9 ._~;@$!*(),/:-]*$/;

/** D14: the article's address, percent-encoded as Wikipedia does. */
export function articleUrl(project: string, title: string): string {
  if (PLAIN_TITLE.test(title)) return `https://${project}/wiki/${title.replaceAll(" ", "_")}`;
  const encoded = encodeURIComponent(title.replaceAll(" ", "_"))
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(KEPT, (m) => decodeURIComponent(m));
  return `https://${project}/wiki/${encoded}`;
}

export function sourceOf(
  project: string,
  page: { pageId: number; revId: number; title: string },
  url = articleUrl(project, page.title),
): Source {
  return {
    project,
    page_id: page.pageId,
    revision_id: page.revId,
    source_url: url,
    permalink: `https://${project}/w/index.php?curid=${page.pageId}&oldid=${page.revId}`,
  };
}

/** The attribution objects of one snapshot (its wiki and how its text was made). */
export class Attributions {
  readonly modifications: string[];
  /** For search and changes: each result links to its own source. */
  readonly results: Attribution;
  /** For meta: the dataset as a whole. */
  readonly dataset: Attribution;

  constructor(private readonly meta: SnapshotMeta) {
    this.modifications = meta.modifications;
    const site = meta.wiki.sitename || "Wikipedia";
    this.results = this.make(
      `Text from ${site} (${meta.wiki.host}), by its contributors, under ${LICENSE.name} (${LICENSE.url}). ` +
        `Each result links to its source article (url) and revision (source.permalink); credit those. The text was modified: see modifications.`,
    );
    this.dataset = this.make(
      `Text from ${site} (https://${meta.wiki.host}/), by its contributors, under ${LICENSE.name} (${LICENSE.url}). ` +
        `Credit each article by its title and address; the text was modified: see modifications.`,
    );
  }

  /** For one page: names the article and its address. */
  page(title: string, url: string): Attribution {
    return this.make(
      `"${title}" from ${this.meta.wiki.sitename || "Wikipedia"} (${url}), by its contributors, under ${LICENSE.name} (${LICENSE.url}). The text was modified: see modifications.`,
    );
  }

  private make(notice: string): Attribution {
    return {
      license: { ...LICENSE },
      modified: true,
      modifications: this.modifications,
      attribution_notice: notice,
      wikimedia_terms: WIKIMEDIA_TERMS,
    };
  }

  /** api.md 4.7. */
  licenseDocument(): LicenseResponse {
    const { host, sitename } = this.meta.wiki;
    const site = sitename || "Wikipedia";
    return {
      content_license: {
        ...LICENSE,
        summary:
          "You may copy, redistribute and adapt the text for any purpose, even commercially, provided you give appropriate credit, " +
          "link to the license, indicate if changes were made, and share your adaptations under the same license. " +
          "You may not add legal terms or technological measures that restrict others from doing what the license permits.",
      },
      source: {
        name: site,
        project: host,
        terms_url: WIKIMEDIA_TERMS,
        reuse_info: `https://${host}/wiki/Wikipedia:Reusing_Wikipedia_content`,
      },
      modifications: {
        modified: true,
        changes_made: this.modifications,
        note:
          "These are changes of form: the words of the text are the contributors' own. Passages may omit content the source shows " +
          "in tables, infoboxes, images or templates. Say that the text was modified when you reuse it.",
      },
      attribution_requirements: {
        credit: `Credit the authors as "${site} contributors" and link to the source article: each page and hit carries its url, and source.permalink names the exact revision.`,
        license_notice: `State that the text is available under the ${LICENSE.full_name} license (${LICENSE.name}) and link to ${LICENSE.url}.`,
        changes:
          "State that the text was modified from the original, and describe any further changes you make (this API's changes are listed in modifications.changes_made).",
        share_alike: `If you remix, transform or build upon the text, distribute your contributions under the same license, ${LICENSE.name}, or a compatible one.`,
        no_additional_restrictions:
          "Do not apply legal terms or technological measures that legally restrict others from doing anything the license permits.",
      },
      api_service_note:
        "This API is a service for finding and delivering the text; the service's terms cover your use of the API. The content it returns " +
        `is not the service's property: it remains under ${LICENSE.name}, whatever the terms of the service.`,
      trademark_disclaimer:
        "Wikipedia is a registered trademark of the Wikimedia Foundation, Inc., a non-profit organization. This service is not affiliated with, " +
        "sponsored or endorsed by the Wikimedia Foundation.",
    };
  }
}
