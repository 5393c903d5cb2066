/**
 * D9: a hit's `_formatted` text — cropped to `crop_length` code points around the densest
 * run of matched words, cut at word boundaries with "…", matched words in <em>, and every
 * other character HTML-escaped.
 *
 * Runs at every hit of every search, so it makes no object per word: the words of the text
 * (the runs analyze.ts's tokens() finds, split the same way) go into scratch typed arrays
 * with whether each is matched, and a word's folded form is made only when it may be one of
 * the matched terms.
 */
import { UNSPACED } from "../../scripts";
import { fold, joinedUntil, segmenter } from "./analyze";
import {
  answer,
  asciiCandidate,
  candidateOf,
  candidateTerm,
  FNV_OFFSET,
  FNV_PRIME,
  type MatchedTerms,
  type Phrase,
  slots,
  startScan,
  tableMask,
} from "./term-table";

export type { MatchedTerms, Phrase } from "./term-table";

export const CROP_MARKER = "…";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const TO_ESCAPE = /[&<>]/;
const TO_ESCAPE_ALL = /[&<>]/g;
export function escapeHtml(s: string): string {
  return TO_ESCAPE.test(s) ? s.replace(TO_ESCAPE_ALL, (c) => ESCAPES[c]!) : s;
}

/** Punctuation that may close the last word of a crop (a full stop, a bracket). */
const CLOSING = /[^\s\p{L}\p{N}]/u;

/** The words of the last text scanned: UTF-16 offsets, and whether the word is matched. */
let count = 0;
let starts = new Int32Array(1024);
let ends = new Int32Array(1024);
let matchedAt = new Uint8Array(1024);
/** The candidate each word is (term-table.ts), plus one; 0 for none. */
let termAt = new Int32Array(1024);
/** 1 when a word and the next, with nothing between them, stand in one phrase's occurrence: one <em> holds both. */
let joinsNext = new Uint8Array(1024);
/** Indexes of the matched words, and the code-point offset of every UTF-16 offset (formatText). */
let hits = new Int32Array(1024);
let codePoints = new Int32Array(4096);
/** How many words of each candidate (by termAt) the crop's window holds, as it slides. */
let inWindow = new Int32Array(64);

/** Room for the words of a text of n code units (at most one word a code unit). */
function wordRoom(n: number): void {
  if (starts.length > n) return;
  const size = Math.max(n + 1, starts.length * 2);
  starts = new Int32Array(size);
  ends = new Int32Array(size);
  matchedAt = new Uint8Array(size);
  termAt = new Int32Array(size);
  joinsNext = new Uint8Array(size);
}

/** A word (folded: `term`) pushed with the candidate it is and whether `matched` holds it. */
function pushWord(start: number, end: number, term: string, matched: MatchedTerms): void {
  const c = candidateOf(term);
  starts[count] = start;
  ends[count] = end;
  termAt[count] = c + 1;
  matchedAt[count] = c >= 0 && answer(matched, c) ? 1 : 0;
  joinsNext[count] = 0;
  count++;
}

const WORD_START = /^[\p{L}\p{N}]$/u;
const MARK = /^\p{M}$/u;
/** Per BMP code unit: 0 not yet known, 1 a letter or digit (\p{L}, \p{N}), 3 a mark (\p{M}), 2 neither. */
const bmpWordChar = new Uint8Array(65536);

function kindOf(cp: number): number {
  const c = String.fromCodePoint(cp);
  return WORD_START.test(c) ? 1 : MARK.test(c) ? 3 : 2;
}

/** A character of a word: a letter, digit or mark. */
function isWordChar(cp: number): boolean {
  if (cp < 128) return (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122);
  if (cp < 65536) {
    let known = bmpWordChar[cp]!;
    if (!known) bmpWordChar[cp] = known = kindOf(cp);
    return known !== 2;
  }
  return kindOf(cp) !== 2;
}

/** A character a word begins with: a letter or digit; a mark goes with the character before it (D120). */
function startsWord(cp: number): boolean {
  if (cp < 128) return isWordChar(cp);
  if (cp < 65536) return isWordChar(cp) && bmpWordChar[cp] === 1;
  return kindOf(cp) === 1;
}

/** Per ASCII code: its lowercase code for a word character (digits and letters), 0 for the others. */
const ASCII_WORD_LOWER = new Uint8Array(128);
for (let c = 0; c < 128; c++)
  ASCII_WORD_LOWER[c] = isWordChar(c) ? String.fromCharCode(c).toLowerCase().charCodeAt(0) : 0;

/** Whether the text scanned has a high surrogate (set by scan and wordEnd). */
let wide = false;

/**
 * Scans the words of a text into the scratch arrays, as tokens() finds them, marking those
 * whose folded form `matched` holds. ASCII words (most words of most texts) are read in a
 * loop of their own that hashes their lowercase letters as it goes, and are looked up by that
 * hash. Returns whether the text has a high surrogate, that is whether its code-point offsets
 * differ from its UTF-16 offsets.
 */
function scan(text: string, lang: string, matched: MatchedTerms): boolean {
  wide = false;
  startScan(matched);
  const n = text.length;
  wordRoom(n);
  // The ASCII words are written through locals (module bindings cost more in this loop); count is kept in step around pushRun.
  const wordStarts = starts;
  const wordEnds = ends;
  const wordMatched = matchedAt;
  const wordTerm = termAt;
  const wordJoins = joinsNext;
  const filled = slots;
  const mask = tableMask;
  let words = 0;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c < 128) {
      let lower = ASCII_WORD_LOWER[c]!;
      if (lower === 0) {
        i++;
        continue;
      }
      const start = i;
      let h = FNV_OFFSET;
      do {
        h = Math.imul(h ^ lower, FNV_PRIME);
        if (++i === n) break;
        c = text.charCodeAt(i);
      } while (c < 128 && (lower = ASCII_WORD_LOWER[c]!) !== 0);
      if (i === n || c < 128 || !goesOn(text, i)) {
        wordStarts[words] = start;
        wordEnds[words] = i;
        const c = filled[h & mask] !== 0 ? asciiCandidate(text, start, i, h) : -1;
        wordTerm[words] = c + 1;
        wordMatched[words] = c >= 0 && answer(matched, c) ? 1 : 0;
        wordJoins[words] = 0;
        words++;
        continue;
      }
      // A word character beyond ASCII goes on with the word.
      i = wordEnd(text, i, n);
      count = words;
      pushRun(text, start, i, lang, matched);
      words = count;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) wide = true;
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (!startsWord(cp)) {
      i += width;
      continue;
    }
    const start = i;
    i = wordEnd(text, i + width, n);
    count = words;
    pushRun(text, start, i, lang, matched);
    words = count;
  }
  count = words;
  if (matched.phrases) markPhrases(matched.phrases);
  return wide;
}

/** Marks every word of each phrase's occurrences, its words consecutive in the text (D95). */
function markPhrases(phrases: readonly Phrase[]): void {
  for (const { words, prefix } of phrases) {
    const ids = words.map((w) => candidateOf(w) + 1);
    const n = ids.length;
    const last = words[n - 1]!;
    if (n < 2 || ids.slice(0, n - 1).includes(0) || (!prefix && !ids[n - 1])) continue;
    for (let t = 0; t + n <= count; t++) {
      let k = 0;
      while (k < n - 1 && termAt[t + k] === ids[k]) k++;
      if (k < n - 1) continue;
      const end = termAt[t + k]!;
      if (end !== ids[k] && !(prefix && end && matchedAt[t + k] && candidateTerm(end - 1).startsWith(last))) continue;
      matchedAt.fill(1, t, t + n);
      for (let j = t; j < t + n - 1; j++) if (ends[j] === starts[j + 1]) joinsNext[j] = 1;
    }
  }
}

/** Whether the word before i goes on at i: a word character (a surrogate pair read as one code point), or a joiner or apostrophe it holds (D120). */
function goesOn(text: string, i: number): boolean {
  return isWordChar(text.codePointAt(i)!) || joinedUntil(text, i) > i;
}

/** Where the word going on at i ends: its run of word characters, with the joiners and apostrophes it holds (D120). */
function wordEnd(text: string, i: number, n: number): number {
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) wide = true;
    const cp = c < 0xd800 ? c : text.codePointAt(i)!;
    if (!isWordChar(cp)) {
      const joined = joinedUntil(text, i);
      if (joined === i) break;
      i = joined;
      continue;
    }
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/** A run of word characters, not all ASCII, as its word (folded) or, in unspaced script, its words. */
function pushRun(text: string, start: number, end: number, lang: string, matched: MatchedTerms): void {
  const run = text.slice(start, end);
  if (!UNSPACED.test(run)) {
    pushWord(start, end, fold(run), matched);
    return;
  }
  for (const seg of segmenter(lang).segment(run)) {
    if (!seg.isWordLike) continue;
    const term = fold(seg.segment);
    if (term) pushWord(start + seg.index, start + seg.index + seg.segment.length, term, matched);
  }
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** The longest grapheme cluster clusterEnd() reads, in code units: a longer one (stacked marks) is not taken. */
const CLUSTER_REACH = 32;

/** Where the grapheme cluster (a user-perceived character) starting at i ends; -1 past CLUSTER_REACH. */
function clusterEnd(text: string, i: number): number {
  const n = text.length;
  // ASCII before ASCII (or the end) is a cluster of its own, CR LF apart; \r is no closing punctuation.
  if (text.charCodeAt(i) < 128 && (i + 1 === n || text.charCodeAt(i + 1) < 128)) return i + 1;
  const reach = text.slice(i, i + CLUSTER_REACH);
  const first = graphemes.segment(reach)[Symbol.iterator]().next().value!.segment;
  return first.length === reach.length && i + reach.length < n ? -1 : i + first.length;
}

/**
 * Not one whole word fits the window of code points [start, end) (a very long word): the grapheme clusters inside it,
 * so that no letter loses its marks, or a flag half of itself.
 */
function cutInside(text: string, start: number, end: number, length: number): string {
  let body = "";
  let first = -1;
  let last = -1;
  let at = 0;
  for (const { segment } of graphemes.segment(text)) {
    let n = 0;
    for (const _ of segment) n++;
    if (at >= start && at + n <= end) {
      body += segment;
      if (first < 0) first = at;
      last = at + n;
    }
    at += n;
    if (at >= end) break;
  }
  if (first < 0) return CROP_MARKER;
  return (first > 0 ? CROP_MARKER : "") + escapeHtml(body) + (last < length ? CROP_MARKER : "");
}

/** Offsets that are their own code-point offsets (a text without surrogates), grown as longer texts come. */
let identity = new Int32Array(0);
function sameOffsets(length: number): Int32Array {
  if (identity.length < length + 1) {
    identity = new Int32Array(Math.max(length + 1, identity.length * 2));
    for (let i = 0; i < identity.length; i++) identity[i] = i;
  }
  return identity;
}

/** Fills codePoints with the code-point offset of every UTF-16 offset that starts a code point. */
function codePointOffsets(text: string): Int32Array {
  if (codePoints.length < text.length + 1)
    codePoints = new Int32Array(Math.max(text.length + 1, codePoints.length * 2));
  const map = codePoints;
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    map[i] = cp;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) map[++i] = cp;
    cp++;
  }
  map[text.length] = cp;
  return map;
}

/**
 * The text from `from` to `to` (UTF-16 offsets) escaped, the scanned matched words in it in <em>;
 * the words of a phrase with nothing between them (unspaced script) in one.
 */
function render(text: string, from: number, to: number, highlight: boolean): string {
  let out = "";
  let at = from;
  if (highlight) {
    for (let t = 0; t < count; t++) {
      if (!matchedAt[t] || ends[t]! <= from || starts[t]! >= to) continue;
      const first = starts[t]!;
      let end = ends[t]!;
      while (joinsNext[t] && starts[t + 1]! < to) end = ends[++t]!;
      out += `${escapeHtml(text.slice(at, first))}<em>${escapeHtml(text.slice(first, end))}</em>`;
      at = end;
    }
  }
  return out + escapeHtml(text.slice(at, to));
}

export function formatTitle(title: string, matched: MatchedTerms, highlight: boolean, lang: string): string {
  scan(title, lang, matched);
  return render(title, 0, title.length, highlight);
}

export function formatText(
  text: string,
  matched: MatchedTerms,
  cropLength: number,
  highlight: boolean,
  lang: string,
): string {
  const cp = scan(text, lang, matched) ? codePointOffsets(text) : sameOffsets(text.length);
  const length = cp[text.length]!;
  if (length <= cropLength) return render(text, 0, text.length, highlight);

  // The window of cropLength code points holding the most distinct matched terms, then the most matched words (D95).
  if (hits.length < count) hits = new Int32Array(Math.max(count, hits.length * 2));
  let hitCount = 0;
  let terms = 0;
  for (let t = 0; t < count; t++)
    if (matchedAt[t]) {
      hits[hitCount++] = t;
      terms = Math.max(terms, termAt[t]! + 1);
    }
  if (inWindow.length < terms) inWindow = new Int32Array(Math.max(terms, inWindow.length * 2));
  let bestFirst = 0;
  let bestCount = 0;
  let bestDistinct = 0;
  let distinct = 0;
  for (let i = 0, j = 0; i < hitCount; i++) {
    if (j < i) j = i;
    while (j < hitCount && cp[ends[hits[j]!]!]! - cp[starts[hits[i]!]!]! <= cropLength)
      if (inWindow[termAt[hits[j++]!]!]!++ === 0) distinct++;
    if (distinct > bestDistinct || (distinct === bestDistinct && j - i > bestCount)) {
      bestDistinct = distinct;
      bestCount = j - i;
      bestFirst = i;
    }
    if (j > i && --inWindow[termAt[hits[i]!]!]! === 0) distinct--;
  }
  let start = 0;
  if (bestCount) {
    const spanStart = cp[starts[hits[bestFirst]!]!]!;
    const spanEnd = cp[ends[hits[bestFirst + bestCount - 1]!]!]!;
    start = Math.max(0, spanStart - Math.floor((cropLength - (spanEnd - spanStart)) / 2));
  }
  const end = Math.min(length, start + cropLength);
  start = Math.max(0, end - cropLength);

  // Cut at word boundaries: drop a word the window cuts through, at either end.
  let from = -1;
  let to = -1;
  for (let t = 0; t < count; t++) {
    const s = cp[starts[t]!]!;
    const e = cp[ends[t]!]!;
    if (s >= start && e <= end) {
      if (from < 0) from = starts[t]!;
      to = ends[t]!;
    }
  }
  if (from < 0) return cutInside(text, start, end, length);
  if (start === 0) from = 0;
  if (end === length) to = text.length;
  // Keep punctuation that closes the last word (a full stop, a bracket) when it fits, each character whole: an emoji
  // flag's two halves, a mark with its base.
  while (to < text.length && CLOSING.test(text[to]!)) {
    const next = clusterEnd(text, to);
    if (next < 0 || cp[next]! - cp[from]! > cropLength) break;
    to = next;
  }
  const body = render(text, from, to, highlight);
  return (from > 0 ? CROP_MARKER : "") + body + (to < text.length ? CROP_MARKER : "");
}
