/**
 * What a page's title and its section headings say of a query's words, for choosing the page's
 * passage (D93): which query words the title names, and which a heading names. A word of a title
 * or heading names a query word when it is one of the word's forms the search derived (itself,
 * its other forms, its typos, a prefix's completions), has its stem, or when one of the two stems,
 * of RELATED_STEM letters or more, begins the other: Snowball gives "discovered" and "discovery"
 * the stems "discov" and "discoveri", "diagnosed" and "diagnosis" "diagnos" and "diagnosi".
 */
import { terms, termOfKey } from "../text/analyze";
import { stemmerFor, type Stem } from "../text/stem";
import type { Derived } from "../postings/shard-types";
import type { Shard } from "../postings/shard";
import { functionWords } from "./terms";

const RELATED_STEM = 5;

/** A title's qualifier, "(disambiguation)", "(1115–1234)", "(planet)": it tells pages apart, the query need not hold it. */
const QUALIFIER = /\s*\([^()]*\)\s*$/;

/** How a text's words stand to the query's words. */
export interface Named {
  /** A bit for each query word one of the text's words names. */
  words: number;
  /** Whether every word of the text (but function words, when it has others) names a query word. */
  whole: boolean;
}

/** The query's words with their forms, and the texts already read (a section's heading is read once per search). */
export class PassageWords {
  private readonly forms: string[][];
  private readonly stems: string[][];
  private readonly stem: Stem | undefined;
  private readonly known = new Map<string, Named>();
  private readonly functionWords: ReadonlySet<string>;

  constructor(
    text: Shard,
    words: string[],
    derived: Derived[],
    private readonly lang: string,
  ) {
    this.stem = stemmerFor(lang);
    this.functionWords = functionWords(lang);
    this.forms = words.map((w) => [w]);
    for (const d of derived) {
      const form = termOfKey(text.keyOf(d.term));
      const forms = this.forms[d.word];
      if (forms && !forms.includes(form)) forms.push(form);
    }
    const stem = this.stem;
    this.stems = stem ? this.forms.map((forms) => forms.map(stem)) : [];
  }

  /** The query words a page title names; its qualifier left out. */
  title(title: string): Named {
    return this.named(title.replace(QUALIFIER, ""));
  }

  /** The query words a heading names. */
  heading(heading: string): Named {
    return heading ? this.named(heading) : { words: 0, whole: false };
  }

  private named(text: string): Named {
    let out = this.known.get(text);
    if (out) return out;
    const all = terms(text, this.lang);
    const informative = all.filter((t) => !this.functionWords.has(t));
    let words = 0;
    let whole = informative.length > 0 || all.length > 0;
    for (const t of informative.length ? informative : all) {
      const bits = this.wordsOf(t);
      words |= bits;
      if (!bits) whole = false;
    }
    out = { words: words >>> 0, whole };
    this.known.set(text, out);
    return out;
  }

  /** The bits of the query words `t` (a folded word) is a form of. */
  private wordsOf(t: string): number {
    const stem = this.stem;
    const s = stem?.(t);
    let bits = 0;
    for (let w = 0; w < this.forms.length; w++) {
      const forms = this.forms[w]!;
      if (forms.includes(t) || (s !== undefined && this.stems[w]!.some((f) => related(f, s)))) bits |= 1 << w;
    }
    return bits;
  }
}

/** Whether two stems are one's: equal, or the shorter, of RELATED_STEM letters or more, begins the other. */
function related(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return short.length >= RELATED_STEM && long.startsWith(short);
}
