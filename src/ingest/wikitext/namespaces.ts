/**
 * Names that link to files and categories. The dump's <siteinfo> gives each namespace's
 * canonical local name; MediaWiki also accepts the English names and some older local
 * aliases that siteinfo does not list.
 */
import type { WikiNames } from "./markup";
import { ownTable } from "./tex-symbols";

const FILE = 6;
const MEDIA = -2;
const CATEGORY = 14;

/** By the wiki's language, which the dump names: a table without a prototype (a wiki of language `constructor` has none). */
const FILE_ALIASES = ownTable<string[]>({
  bn: ["ফাইল", "চিত্র"],
  el: ["Εικόνα", "Αρχείο"],
  hy: ["Պատկեր", "Ֆայլ"],
  ja: ["画像", "ファイル"],
  mr: ["चित्र", "संचिका"],
  uk: ["Зображення", "Файл"],
  vi: ["Hình", "Tập tin"],
});

export function wikiNames(lang: string, namespaces: Map<string, number>): WikiNames {
  const file = ["File", "Image", "Media", ...(FILE_ALIASES[lang] ?? [])];
  const category = ["Category"];
  for (const [name, key] of namespaces) {
    if (key === FILE || key === MEDIA) file.push(name);
    if (key === CATEGORY) category.push(name);
  }
  return { file: [...new Set(file)], category: [...new Set(category)] };
}
