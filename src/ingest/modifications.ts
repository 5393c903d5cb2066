/**
 * What ingest does to the source text, in words a reuser can quote: CC BY-SA 4.0 asks that
 * changes be indicated (D16).
 */
export function modifications(chunkWords: number): string[] {
  return [
    "Converted from wikitext markup to plain text",
    "Rendered mathematical and chemical formulas and number templates as plain text (Unicode symbols, a/b for fractions)",
    "Removed HTML tags, references and footnotes, most templates, infoboxes, tables, images and their captions",
    "Removed sections that only list sources or links (such as References, External links and See also)",
    "Split into sections by heading hierarchy",
    `Cut into passages (chunks) of at most ${chunkWords} words`,
  ];
}
