/**
 * A model of English Wikipedia measured on the shared English dumps through the real pipeline
 * (src/ingest): the shapes of real articles (sections, headings, paragraph lengths), how many
 * redirects and links they carry, and a word law: the real surface words with their real
 * frequencies at the head, then a Zipf tail p(r) ∝ r^-s with s = 1/β of the dumps' Heaps' law,
 * so that vocabulary keeps growing with size as it does in Wikipedia. Past the real vocabulary
 * the tail's words are made up, letter by letter, by a Markov chain trained on the real words.
 * generateEnglish() writes a MediaWiki XML export from it, streamed page by page.
 */
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { dumpsDir } from "../support";
import { ingest, wordCount, type IngestResult } from "../../src/ingest";
import { words } from "../../src/search/text/analyze";
import { corpusStats, type CorpusStats } from "./corpus-stats";

export const ENGLISH_DUMPS = ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2"];

/** One real article: its sections, each with its heading level and its paragraphs' word counts. */
export interface PageShape {
  /** Chunks the real article was cut into. */
  chunks: number;
  sections: { level: number; headingWords: number; blocks: number[] }[];
}

export interface EnglishModel {
  real: IngestResult;
  realStats: CorpusStats;
  shapes: PageShape[];
  redirectsPerArticle: number;
  linksPerWord: number;
  /** Draws a word by rank from a uniform number in [0, 1). */
  word(u: number): string;
  /** The made-up word of a rank past the real vocabulary (pure: the same rank gives the same word). */
  syntheticWord(rank: number): string;
  vocabulary: number;
  /** Share of tokens drawn from the real words at their measured frequency. */
  headShare: number;
  headWords: number;
  zipfTail: number;
}

/** A small fast PRNG (mulberry32), seeded: the generator is deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words this often seen or more keep their measured frequency; rarer ones follow the fitted tail. */
const HEAD_MIN_COUNT = 5;

export async function englishModel(): Promise<EnglishModel> {
  const dir = dumpsDir();
  let links = 0;
  const real = await ingest({
    dumps: ENGLISH_DUMPS.map((f) => join(dir, f)),
    onPage: (p) => {
      if (p.ns === 0 && !/^\s*#redirect/i.test(p.text)) links += p.text.split("[[").length - 1;
    },
  });
  const realStats = corpusStats([real]);

  const shapes: PageShape[] = [];
  const counts = new Map<string, number>();
  for (const a of real.articles) {
    const sections = a.sections.map((s) => ({
      level: s.level,
      headingWords: Math.max(1, wordCount(s.heading)),
      blocks: [] as number[],
    }));
    for (const c of a.chunks) {
      for (const block of c.text.split("\n\n")) sections[c.section]!.blocks.push(wordCount(block));
      for (const w of words(c.text, "en")) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
    shapes.push({ chunks: a.chunks.length, sections });
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const vocab = ranked.map(([w]) => w);
  const total = ranked.reduce((s, [, n]) => s + n, 0);
  const head = ranked.findIndex(([, n]) => n < HEAD_MIN_COUNT);
  const headCumulative = new Float64Array(head);
  let sum = 0;
  for (let r = 0; r < head; r++) headCumulative[r] = sum += ranked[r]![1] / total;
  const headMass = sum;
  const s = 1 / realStats.heaps.beta;

  const markov = trainMarkov(vocab.slice(head).filter((w) => /^[A-Za-z]{3,}$/.test(w)));
  const known = new Set(vocab);
  const capitalShare = vocab.slice(head).filter((w) => /^[A-Z]/.test(w)).length / Math.max(1, vocab.length - head);
  let made = new Map<number, string>();
  const syntheticWord = (rank: number): string => {
    const cached = made.get(rank);
    if (cached !== undefined) return cached;
    if (made.size >= 1_000_000) made = new Map();
    const w = makeWord(rank);
    made.set(rank, w);
    return w;
  };
  const makeWord = (rank: number): string => {
    const random = prng(Math.imul(rank % 2147483647, 2654435761) ^ (rank / 2147483647));
    for (;;) {
      let w = markov(random);
      if (random() < capitalShare) w = w.charAt(0).toUpperCase() + w.slice(1);
      if (!known.has(w)) return w;
    }
  };

  return {
    real,
    realStats,
    shapes,
    redirectsPerArticle: real.redirects.length / real.articles.length,
    linksPerWord: links / realStats.tokens,
    vocabulary: vocab.length,
    headShare: headMass,
    headWords: head,
    zipfTail: s,
    syntheticWord,
    word(u) {
      if (u < headMass) {
        let lo = 0;
        let hi = head - 1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (headCumulative[mid]! < u) lo = mid + 1;
          else hi = mid;
        }
        return vocab[lo]!;
      }
      // The tail, a continuous Pareto past the head, inverted: rank = head · v^(-1/(s-1)).
      const v = (u - headMass) / (1 - headMass) || Number.MIN_VALUE;
      const rank = Math.min(Math.floor(head * v ** (-1 / (s - 1))), 1e15);
      return rank < vocab.length ? vocab[rank]! : syntheticWord(rank);
    },
  };
}

/** An order-2 letter chain over the given words: returns a maker of new words of 3 to 14 letters. */
function trainMarkov(sample: string[]): (random: () => number) => string {
  // Letters are a–z (0–25); 26 marks a word's edges. A state is the last two letters, 27·a + b.
  const EDGE = 26;
  const counts = new Float64Array(27 * 27 * 27);
  for (const w of sample) {
    let a = EDGE;
    let b = EDGE;
    for (const ch of `${w.toLowerCase()}$`) {
      const c = ch === "$" ? EDGE : ch.charCodeAt(0) - 97;
      counts[(27 * a + b) * 27 + c]!++;
      a = b;
      b = c;
    }
  }
  // Cumulative counts per state, inverted by a linear scan (27 letters at most).
  for (let s = 0; s < 27 * 27; s++) for (let c = 1; c < 27; c++) counts[s * 27 + c]! += counts[s * 27 + c - 1]!;
  return (random) => {
    for (;;) {
      let word = "";
      let state = 27 * EDGE + EDGE;
      while (word.length < 15) {
        const base = state * 27;
        const x = random() * counts[base + 26]!;
        let c = 0;
        while (counts[base + c]! <= x) c++;
        if (c === EDGE) break;
        word += String.fromCharCode(97 + c);
        state = (state % 27) * 27 + c;
      }
      if (word.length >= 3 && word.length <= 14) return word;
    }
  };
}

/** Writes `chunks` English-like chunks (about) to out; returns pages, redirects and chunks written. */
/** The start of a synthetic export: the root element and its siteinfo (an English wiki, namespace 0). */
export const SYNTHETIC_DUMP_HEAD = `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Synthetic English</sitename>
    <dbname>enwiki</dbname>
    <base>https://synthetic.example.org/wiki/Main_Page</base>
    <namespaces><namespace key="0" /></namespaces>
  </siteinfo>
`;

export async function generateEnglish(
  model: EnglishModel,
  out: string,
  chunks: number,
  seed: number,
  onProgress?: (chunks: number) => void,
) {
  const random = prng(seed);
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // A CV syllable per digit in base 85: distinct numbers give distinct names, with no memory of the titles given.
  const syllables = [..."bcdfghjklmnprstvz"].flatMap((c) => [..."aeiou"].map((v) => c + v));
  const name = (n: number) => {
    let s = "";
    for (let x = n + syllables.length; x > 0; x = Math.floor(x / syllables.length))
      s = syllables[x % syllables.length] + s;
    return cap(s);
  };
  /** The title of page number n, unique: a pure function of n. */
  const titleOf = (n: number) => {
    const r = prng(seed ^ Math.imul(n, 0x9e3779b1));
    const words = Math.floor(r() * 3);
    const prefix = Array.from({ length: words }, () => cap(model.word(0.6 + 0.4 * r())));
    return [...prefix, name(n)].join(" ").replace(/[[\]|{}#<>]/g, "");
  };
  const sentence = (n: number) => {
    const ws: string[] = [];
    for (let i = 0; i < n; i++) {
      const w = model.word(random());
      ws.push(random() < model.linksPerWord ? `[[${w}]]` : w);
    }
    return `${ws.join(" ")}.`;
  };
  const paragraph = (words: number) => {
    const out: string[] = [];
    for (let left = words; left > 0; ) {
      const n = Math.min(left, 8 + Math.floor(random() * 28));
      out.push(sentence(n));
      left -= n;
    }
    return out.join(" ");
  };
  const wikitext = (shape: PageShape) => {
    const parts: string[] = [];
    shape.sections.forEach((s, i) => {
      if (i > 0) {
        const eq = "=".repeat(Math.max(2, s.level));
        parts.push(`${eq} ${cap(Array.from({ length: s.headingWords }, () => model.word(random())).join(" "))} ${eq}`);
      }
      for (const words of s.blocks) parts.push(paragraph(words));
    });
    return parts.join("\n\n");
  };
  const chunksOf = model.shapes.map((s) => s.chunks);

  const file = createWriteStream(out);
  const write = (s: string) => new Promise<void>((res) => (file.write(s) ? res() : file.once("drain", () => res())));
  await write(SYNTHETIC_DUMP_HEAD);
  const page = (n: number, title: string, text: string) => {
    const ts = new Date(Date.UTC(2020, 0, 1) + n * 60_000).toISOString().replace(/\.000Z$/, "Z");
    return `  <page>\n    <title>${xml(title)}</title>\n    <ns>0</ns>\n    <id>${n}</id>\n    <revision>\n      <id>${1_000_000 + n}</id>\n      <timestamp>${ts}</timestamp>\n      <text xml:space="preserve">${xml(text)}</text>\n    </revision>\n  </page>\n`;
  };
  let written = 0;
  let pages = 0;
  let redirects = 0;
  let n = 0;
  while (written < chunks) {
    const i = Math.floor(random() * model.shapes.length);
    const title = titleOf(++n);
    await write(page(n, title, wikitext(model.shapes[i]!)));
    pages++;
    written += chunksOf[i]!;
    // Redirects to this page, as many per article on average as in the dumps.
    for (let r = model.redirectsPerArticle; r > 0 && random() < r; r--) {
      ++n;
      await write(page(n, titleOf(n), `#REDIRECT [[${title}]]`));
      redirects++;
    }
    onProgress?.(written);
  }
  await write("</mediawiki>\n");
  await new Promise<void>((res) => file.end(res));
  return { pages, redirects, chunks: written };
}
