/**
 * The query mix of the search benchmarks, drawn from a snapshot's own text with a fixed seed
 * so that every kind has matches: single words, 2-4 words, phrases, very common words, questions
 * (function words around content words), function words alone, typos, prefixes and Japanese.
 */
import { DEFAULTS, terms } from "../src/search";
import { functionWords } from "../src/search/stages/terms";
import type { Snapshot } from "../src/snapshot";

/** A search request's parameters when it gives none (the API's defaults), as the routes' answers.search takes them. */
export const REQUEST_DEFAULTS = {
  limit: DEFAULTS.limit,
  offset: DEFAULTS.offset,
  crop_length: DEFAULTS.cropLength,
  highlight: DEFAULTS.highlight,
} as const;

/** The first search after boot: fixed, so that it reads nothing of the file that the mix's drawing would have warmed. */
export const FIRST_QUERY = "history of the river valley";

/** Random words of a snapshot's own text, with a fixed seed: what the query mixes of the benchmarks and tests are drawn from. */
export interface QuerySampler {
  /** Uniform in [0, 1), from the seed. */
  random: () => number;
  pick: <T>(xs: T[]) => T;
  /** n consecutive words of a random chunk (that many of them passing `filter`); [] when none is found. */
  sampleWords: (n: number, filter?: (w: string) => boolean) => string[];
  /** The `count` most frequent of `samples` single words drawn. */
  common: (count: number, samples: number) => string[];
  /** The word with one letter inside it replaced (e ↔ a); words of fewer than 3 letters as they are. */
  typo: (word: string) => string;
}

export function querySampler(snapshot: Snapshot, seedValue = 7): QuerySampler {
  let seed = seedValue;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  // Read from the page table's columns, so that a snapshot of millions of chunks needs no page objects.
  const table = snapshot.pages;
  const pages = pagesWithText(snapshot);
  const lang = snapshot.meta.wiki.lang;
  const sampleWords = (n: number, filter: (w: string) => boolean = () => true): string[] => {
    for (let tries = 0; tries < 100; tries++) {
      const p = pages[Math.floor(random() * pages.length)]!;
      const c = Math.floor(random() * table.chunkCounts[p]!);
      const ws = terms(table.chunkText(p, c), lang).filter(filter);
      if (ws.length >= n) {
        const at = Math.floor(random() * (ws.length - n + 1));
        return ws.slice(at, at + n);
      }
    }
    return [];
  };
  return {
    random,
    pick: (xs) => xs[Math.floor(random() * xs.length)]!,
    sampleWords,
    common: (count, samples) => {
      const frequency = new Map<string, number>();
      for (let i = 0; i < samples; i++) for (const w of sampleWords(1)) frequency.set(w, (frequency.get(w) ?? 0) + 1);
      return [...frequency.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([w]) => w);
    },
    typo: (w) => {
      const cs = [...w];
      if (cs.length < 3) return w;
      const i = 1 + Math.floor(random() * (cs.length - 2));
      cs[i] = cs[i] === "e" ? "a" : "e";
      return cs.join("");
    },
  };
}

export function queryMix(snapshot: Snapshot, seedValue = 7): Record<string, () => string> {
  const { random, pick, sampleWords, common: mostFrequent, typo } = querySampler(snapshot, seedValue);
  const common = mostFrequent(10, 2000);
  const japanese = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
  const long = (w: string) => [...w].length >= 6 && !japanese.test(w);
  const stop = functionWords(snapshot.meta.wiki.lang);
  const content = (w: string) => !stop.has(w);
  const functional = (w: string) => stop.has(w);
  const opening = () => `${pick(["who", "what", "when", "where", "how"])} ${pick(["is", "was", "did"])} the`;

  return {
    "single word": () => sampleWords(1).join(" "),
    "2-4 words": () => sampleWords(2 + Math.floor(random() * 3)).join(" "),
    phrase: () => `"${sampleWords(2 + Math.floor(random() * 2)).join(" ")}"`,
    "very common": () => pick(common),
    // A reader's question: function words around two content words of the text ("what is the albedo of snow", issue 58).
    question: () => `${opening()} ${sampleWords(1, content).join(" ")} of ${sampleWords(1, content).join(" ")}`,
    // Function words alone, as "to be or not to be" or "the who" (issue 58): 2 to 6 of them.
    "function words": () =>
      Array.from({ length: 2 + Math.floor(random() * 5) }, () => sampleWords(1, functional)[0] ?? "the").join(" "),
    typo: () => typo(sampleWords(1, long)[0] ?? "encyclopedia"),
    prefix: () => [...(sampleWords(1, long)[0] ?? "encyclopedia")].slice(0, 4).join(""),
    japanese: () => sampleWords(1, (w) => japanese.test(w)).join(" "),
  };
}

/**
 * Issue 44's question class, any word of the text between the function words (a third of its
 * queries were function words only): measured once beside the new classes (bench/search/latency.ts --before-classes).
 */
export function questionBefore(snapshot: Snapshot, seedValue = 7): () => string {
  const { pick, sampleWords } = querySampler(snapshot, seedValue);
  return () =>
    `${pick(["who", "what", "when", "where", "how"])} ${pick(["is", "was", "did"])} the ${sampleWords(1).join(" ")} of the ${sampleWords(1).join(" ")}`;
}

/** The class `name` of a query mix (queryMix()), or an error naming the classes it has: what a script's --class asks for. */
export function mixClass(mix: Record<string, () => string>, name: string): () => string {
  const make = mix[name];
  if (!make) throw new Error(`--class must be among: ${Object.keys(mix).join(", ")}`);
  return make;
}

/** The rows of the page table whose pages have chunks (read from its columns: no page objects). */
export function pagesWithText(snapshot: Snapshot): Uint32Array {
  const counts = snapshot.pages.chunkCounts;
  const rows = new Uint32Array(counts.length);
  let n = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i]) rows[n++] = i;
  return rows.subarray(0, n);
}

/** The id of the page with the most chunks: the largest answer of /v1/page. */
export function longestPageId(snapshot: Snapshot): number {
  const { ids, chunkCounts } = snapshot.pages;
  let longest = 0;
  for (let i = 1; i < ids.length; i++) if (chunkCounts[i]! > chunkCounts[longest]!) longest = i;
  return ids[longest]!;
}

/** Issue 57's hostile searches: 500 characters of quoted common words, typos and text words, ending in a short prefix. */
export function hostileQueries(): string[] {
  let seed = 11;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const common = ["the", "of", "and", "in", "to", "a", "is", "was", "for", "on", "as", "by", "with", "that"];
  const words = ["anarchizm", "philosofy", "einstien", "albedoo", "history", "river", "city", "music", "war"];
  return Array.from({ length: 12 }, () => {
    let q = "";
    while (q.length < 480)
      q += random() < 0.5 ? `"${pick(common)} ${pick(common)}" ` : `${pick(words)} ${pick(common)} `;
    return `${q.slice(0, 496).trimEnd()} ${pick(["al", "th", "ph", "ei"])}`;
  });
}
