/**
 * How the PDF's English sentences name the article's wiki and its authors. A wiki's own name
 * is in its language (Βικιπαίδεια); the attribution is in English, so it says "the Greek
 * Wikipedia article" and "Wikipedia contributors", from the wiki's host and language.
 */

/** The Wikimedia projects whose articles a dump can hold, by the domain of their hosts. */
const PROJECTS =
  /^[a-z0-9-]+\.(wikipedia|wiktionary|wikibooks|wikinews|wikiquote|wikisource|wikiversity|wikivoyage)\.org$/i;

const LANGUAGES = new Intl.DisplayNames(["en"], { type: "language" });

export interface Credit {
  /** e.g. `Greek Wikipedia article "Γεωγραφία"`, or `article "…" from wiki.example.org`. */
  article: string;
  /** e.g. "Wikipedia contributors". */
  authors: string;
}

/**
 * Wikimedia wikis whose host does not name their content language (their dump's xml:lang): simple.wikipedia.org is
 * "en", so the language alone would credit the English Wikipedia; als.wikipedia.org is "gsw". Named as Wikimedia
 * names them (meta.wikimedia.org, "Special language codes"), by the host's first label.
 */
const WIKI_NAMES = new Map([
  ["simple", "Simple English"],
  ["als", "Alemannic"],
  ["bat-smg", "Samogitian"],
  ["be-x-old", "Belarusian (Taraškievica)"],
  ["be-tarask", "Belarusian (Taraškievica)"],
  ["cbk-zam", "Chavacano"],
  ["fiu-vro", "Võro"],
  ["map-bms", "Banyumasan"],
  ["nds-nl", "Dutch Low Saxon"],
  ["nrm", "Norman"],
  ["roa-rup", "Aromanian"],
  ["roa-tara", "Tarantino"],
  ["zh-classical", "Classical Chinese"],
  ["zh-min-nan", "Min Nan"],
  ["zh-yue", "Cantonese"],
]);

/** The English name of a language code ("el" → "Greek"), or "" where there is none ("simple"). */
function languageName(code: string): string {
  try {
    const name = LANGUAGES.of(code) ?? "";
    return /^[A-Z]/.test(name) ? name : "";
  } catch {
    return "";
  }
}

/** How to name the article `title` of the wiki at `project` (its host) written in `lang`. */
export function creditFor(project: string, lang: string, title: string): Credit {
  const family = PROJECTS.exec(project)?.[1];
  if (!family) return { article: `article "${title}" from ${project}`, authors: `${project} contributors` };
  const name = family[0]!.toUpperCase() + family.slice(1).toLowerCase();
  const language = WIKI_NAMES.get(project.split(".")[0]!.toLowerCase()) ?? languageName(lang);
  const wiki = [language, name].filter(Boolean).join(" ");
  return { article: `${wiki} article "${title}"`, authors: `${name} contributors` };
}
