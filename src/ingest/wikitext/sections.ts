/**
 * Sections that only list sources or links. They are dropped with their subsections.
 * Names per language code; English names are dropped in every language, since many
 * wikis copy them. Looked up by the wiki's language, which the dump names (a wiki of language `constructor` is of
 * none known): a table without a prototype.
 */
import { ownTable } from "./tex-symbols";

const SOURCE_SECTIONS = ownTable<string[]>({
  en: [
    "references",
    "notes",
    "notes and references",
    "references and notes",
    "footnotes",
    "citations",
    "sources",
    "external links",
    "further reading",
    "bibliography",
    "see also",
    "works cited",
    "general references",
    "external sources",
    "other websites",
  ],
  bn: [
    "তথ্যসূত্র",
    "বহিঃসংযোগ",
    "আরও দেখুন",
    "আরো দেখুন",
    "পাদটীকা",
    "আরও পড়ুন",
    "আরো পড়ুন",
    "টীকা",
    "গ্রন্থপঞ্জি",
    "উৎস",
    "বহিঃসংযোগসমূহ",
  ],
  el: [
    "παραπομπές",
    "εξωτερικοί σύνδεσμοι",
    "δείτε επίσης",
    "βιβλιογραφία",
    "σημειώσεις",
    "πηγές",
    "περαιτέρω ανάγνωση",
  ],
  hy: [
    "ծանոթագրություններ",
    "արտաքին հղումներ",
    "տես նաև",
    "գրականություն",
    "աղբյուրներ",
    "նշումներ",
    "ծանոթություններ",
  ],
  ja: [
    "脚注",
    "出典",
    "注釈",
    "参考文献",
    "外部リンク",
    "関連項目",
    "関連文献",
    "注",
    "参照",
    "脚注・出典",
    "注釈・出典",
  ],
  mr: [
    "संदर्भ",
    "बाह्य दुवे",
    "बाह्यदुवे",
    "बाह्य दुवा",
    "हे सुद्धा पहा",
    "हेसुद्धा पहा",
    "हेही पहा",
    "संदर्भ आणि नोंदी",
    "तळटीपा",
    "नोंदी",
  ],
  uk: [
    "примітки",
    "джерела",
    "посилання",
    "література",
    "див. також",
    "виноски",
    "джерела та література",
    "література та джерела",
  ],
  vi: [
    "tham khảo",
    "chú thích",
    "liên kết ngoài",
    "xem thêm",
    "đọc thêm",
    "thư mục",
    "ghi chú",
    "nguồn",
    "tài liệu tham khảo",
  ],
});

/** Dropped in every language. */
const { en: ENGLISH = [] } = SOURCE_SECTIONS;

const normalize = (heading: string): string =>
  heading
    .normalize("NFC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/[\s:：]+$/, "")
    .trim();

const cache = new Map<string, Set<string>>();

function namesFor(lang: string): Set<string> {
  let set = cache.get(lang);
  if (!set) {
    set = new Set([...ENGLISH, ...(SOURCE_SECTIONS[lang] ?? [])].map(normalize));
    cache.set(lang, set);
  }
  return set;
}

export function isSourceSection(heading: string, lang: string): boolean {
  return namesFor(lang).has(normalize(heading));
}
