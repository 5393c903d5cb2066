/**
 * The OpenAPI document's example values: real ones, from the shared dump enwiki-2016-sample
 * (page 39, "Albedo", and its first chunk) and from what the server answers for it.
 * test/openapi.test.ts checks each against a server on that dump, so they cannot go stale.
 */
import { tomeVersion } from "./version";

const LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/";

export const EXAMPLE = {
  page: {
    page_id: 39,
    rev_id: 715952044,
    title: "Albedo",
    url: "https://en.wikipedia.org/wiki/Albedo",
    timestamp: "2016-04-18T23:12:22Z",
    ts_unix: 1461021142,
  },
  source: {
    project: "en.wikipedia.org",
    permalink: "https://en.wikipedia.org/w/index.php?curid=39&oldid=715952044",
  },
  chunk: {
    id: "39_0",
    chunk_id: 0,
    section: "",
    /** The chunk's first paragraph (the whole text is about 1,900 characters). */
    text: 'Albedo or reflection coefficient, derived from Latin albedo "whiteness" (or reflected sunlight) in turn from albus "white", is the diffuse reflectivity or reflecting power of a surface.',
    chunks_in_page: 19,
  },
  /** The chunk as a hit of q=albedo. */
  formatted: {
    title: "<em>Albedo</em>",
    text:
      "…accurately characterize the scattering properties of a surface, but <em>albedo</em> is very useful as a first approximation.\n\n" +
      "The <em>albedo</em> is an important concept in climatology, astronomy, and calculating reflectivity of surfaces in LEED sustainable-rating systems for buildings. " +
      "The average overall <em>albedo</em> of Earth, its planetary <em>albedo</em>, is 30 to 35% because of cloud cover, but widely varies locally across…",
  },
  query: "albedo",
  /** Pages matching q=albedo. */
  total_hits: 2,
  /** A since that gives page 39 first. */
  since: "2016-04-18T23:12:22Z",
  license: {
    name: "CC BY-SA 4.0",
    full_name: "Creative Commons Attribution-ShareAlike 4.0 International",
    url: LICENSE_URL,
    summary:
      "You may copy, redistribute and adapt the text for any purpose, even commercially, provided you give appropriate credit, " +
      "link to the license, indicate if changes were made, and share your adaptations under the same license. " +
      "You may not add legal terms or technological measures that restrict others from doing what the license permits.",
  },
  attribution: {
    modifications: [
      "Converted from wikitext markup to plain text",
      "Rendered mathematical and chemical formulas and number templates as plain text (Unicode symbols, a/b for fractions)",
      "Removed HTML tags, references and footnotes, most templates, infoboxes, tables, images and their captions",
      "Removed sections that only list sources or links (such as References, External links and See also)",
      "Split into sections by heading hierarchy",
      "Cut into passages (chunks) of at most 300 words",
    ],
    attribution_notice: `"Albedo" from Wikipedia (https://en.wikipedia.org/wiki/Albedo), by its contributors, under CC BY-SA 4.0 (${LICENSE_URL}). The text was modified: see modifications.`,
    wikimedia_terms: "https://foundation.wikimedia.org/wiki/Terms_of_Use",
  },
  licenseDocument: {
    source: { name: "Wikipedia", reuse_info: "https://en.wikipedia.org/wiki/Wikipedia:Reusing_Wikipedia_content" },
    note:
      "These are changes of form: the words of the text are the contributors' own. Passages may omit content the source shows " +
      "in tables, infoboxes, images or templates. Say that the text was modified when you reuse it.",
    attribution_requirements: {
      credit: `Credit the authors as "Wikipedia contributors" and link to the source article: each page and hit carries its url, and source.permalink names the exact revision.`,
      license_notice: `State that the text is available under the Creative Commons Attribution-ShareAlike 4.0 International license (CC BY-SA 4.0) and link to ${LICENSE_URL}.`,
      changes:
        "State that the text was modified from the original, and describe any further changes you make (this API's changes are listed in modifications.changes_made).",
      share_alike:
        "If you remix, transform or build upon the text, distribute your contributions under the same license, CC BY-SA 4.0, or a compatible one.",
      no_additional_restrictions:
        "Do not apply legal terms or technological measures that legally restrict others from doing anything the license permits.",
    },
    api_service_note:
      "This API is a service for finding and delivering the text; the service's terms cover your use of the API. The content it returns " +
      "is not the service's property: it remains under CC BY-SA 4.0, whatever the terms of the service.",
    trademark_disclaimer:
      "Wikipedia is a registered trademark of the Wikimedia Foundation, Inc., a non-profit organization. This service is not affiliated with, " +
      "sponsored or endorsed by the Wikimedia Foundation.",
  },
  /** /v1/meta for a snapshot of enwiki-2016-sample alone. */
  meta: {
    commitSha: "4154b44da48e1463017b1aefd085151c16dc831f6b9ca02570e4031184f2e17f",
    commitDate: "2026-11-23T07:33:47.792Z",
    pkgVersion: tomeVersion,
    indexes: { pages: "enwiki-pages", chunks: "enwiki-chunks" },
    dataset: {
      indexed_pages: 106,
      indexed_chunks: 2653,
      skipped_redirects: 99,
      snapshot: "enwiki-20160501.tome",
      loaded_at: "2026-11-23T07:40:02.115Z",
    },
  },
};
