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
  /** Per query word: its forms, and its stem (its other forms have it: variants are those of its stem). */
  private readonly forms: Set<string>[];
  private readonly ownStems: string[];
  private readonly stem: Stem | undefined;
  private readonly titles = new Map<string, Named>();
  private readonly headings = new Map<string, Named>();
  private readonly functionWords: ReadonlySet<string>;

  /** `informative`: the bits of the words a heading may name (function words name no section). */
  constructor(
    text: Shard,
    words: string[],
    derived: Derived[],
    private readonly informative: number,
    private readonly lang: string,
  ) {
    this.stem = stemmerFor(lang);
    this.functionWords = functionWords(lang);
    this.forms = words.map((w) => new Set([w]));
    for (const d of derived) this.forms[d.word]?.add(termOfKey(text.keyOf(d.term)));
    this.ownStems = this.stem ? words.map(this.stem) : [];
  }

  /** The query words a page title names; its qualifier left out. */
  title(title: string): Named {
    let out = this.titles.get(title);
    if (!out) this.titles.set(title, (out = this.named(title.replace(QUALIFIER, ""), -1)));
    return out;
  }

  /** The informative query words a heading names. */
  heading(heading: string): number {
    if (!heading || !this.informative) return 0;
    let out = this.headings.get(heading);
    if (!out) this.headings.set(heading, (out = this.named(heading, this.informative)));
    return out.words;
  }

  /** The words of `mask` that `text`'s words name. */
  private named(text: string, mask: number): Named {
    const { words: own, stems } = analyzed(text, this.lang, this.functionWords, this.stem);
    let words = 0;
    let whole = own.length > 0;
    for (let i = 0; i < own.length; i++) {
      const bits = this.wordsOf(own[i]!, stems?.[i], mask);
      words |= bits;
      if (!bits) whole = false;
    }
    return { words: words >>> 0, whole };
  }

  /** The bits of the query words of `mask` that `t` (a folded word, of stem `s`) is a form of. */
  private wordsOf(t: string, s: string | undefined, mask: number): number {
    let bits = 0;
    for (let w = 0; w < this.forms.length; w++) {
      if (!(mask & (1 << w))) continue;
      if (this.forms[w]!.has(t) || (s !== undefined && related(this.ownStems[w]!, s))) bits |= 1 << w;
    }
    return bits;
  }
}

/** Whether two stems are one's: equal, or the shorter, of RELATED_STEM letters or more, begins the other. */
function related(a: string, b: string): boolean {
  if (a === b) return true;
  return a.length < b.length
    ? a.length >= RELATED_STEM && b.startsWith(a)
    : b.length >= RELATED_STEM && a.startsWith(b);
}

/** A title's or heading's words as compared (its informative words, or all when it has no other) and their stems. */
interface Analyzed {
  words: string[];
  stems: string[] | undefined;
}

/** Titles and headings analysed lately, per language: the pages a search shows come back search after search. */
const analyzedTexts = new Map<string, Map<string, Analyzed>>();
const ANALYZED_LIMIT = 100_000;

function analyzed(text: string, lang: string, stop: ReadonlySet<string>, stem: Stem | undefined): Analyzed {
  let known = analyzedTexts.get(lang);
  if (!known) analyzedTexts.set(lang, (known = new Map()));
  let out = known.get(text);
  if (!out) {
    const all = terms(text, lang);
    const informative = all.filter((t) => !stop.has(t));
    const words = informative.length ? informative : all;
    out = { words, stems: stem && words.map(stem) };
    if (known.size >= ANALYZED_LIMIT) known.clear();
    known.set(text, out);
  }
  return out;
}
