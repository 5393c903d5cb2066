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
import { UNSPACED } from "../scripts";
import { fold, segmenter } from "./analyze";

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
/** Indexes of the matched words, and the code-point offset of every UTF-16 offset (formatText). */
let hits = new Int32Array(1024);
let codePoints = new Int32Array(4096);

function pushWord(start: number, end: number, matched: boolean): void {
  if (count === starts.length) {
    const grow = <T extends Int32Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(a.length * 2);
      b.set(a);
      return b;
    };
    starts = grow(starts);
    ends = grow(ends);
    matchedAt = grow(matchedAt);
  }
  starts[count] = start;
  ends[count] = end;
  matchedAt[count] = matched ? 1 : 0;
  count++;
}

const WORD_CHAR = /^[\p{L}\p{M}\p{N}]$/u;
/** Per BMP code unit: 0 not yet known, 1 a word character (\p{L}, \p{M}, \p{N}), 2 not. */
const bmpWordChar = new Uint8Array(65536);

function isWordChar(cp: number): boolean {
  if (cp < 128) return (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122);
  if (cp < 65536) {
    let known = bmpWordChar[cp]!;
    if (!known) bmpWordChar[cp] = known = WORD_CHAR.test(String.fromCharCode(cp)) ? 1 : 2;
    return known === 1;
  }
  return WORD_CHAR.test(String.fromCodePoint(cp));
}

/** Per ASCII code: 1 for a word character (digits and letters), 0 not. */
const ASCII_WORD_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) ASCII_WORD_CHAR[c] = isWordChar(c) ? 1 : 0;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * Scans the words of a text into the scratch arrays, as tokens() finds them, marking those
 * whose folded form `matched` holds. ASCII words (most words of most texts) are read in a
 * loop of their own that hashes their lowercase letters as it goes: one is folded (lowercased)
 * only when its hash is some matched term's. Returns whether the text has a high surrogate,
 * that is whether its code-point offsets differ from its UTF-16 offsets.
 */
/** The terms a text's words are highlighted for: all that may be (`candidates`, one set shared by many hits), and whether one found in the text is (`has`). */
export interface MatchedTerms {
  readonly candidates: ReadonlySet<string>;
  has(term: string): boolean;
}

let hashedTerms: ReadonlySet<string> | undefined;
/** The low bits of the matched terms' hashes, as a filter: a word whose hash misses it is not matched. */
const HASH_BITS = 4095;
const hashFilter = new Uint8Array(HASH_BITS + 1);
/** Whether the text scanned has a high surrogate (set by scan and wordEnd). */
let wide = false;

function scan(text: string, lang: string, matched: MatchedTerms): boolean {
  count = 0;
  wide = false;
  // The hits of a search share their candidates: their hashes are made once.
  if (matched.candidates !== hashedTerms) {
    hashedTerms = matched.candidates;
    hashFilter.fill(0);
    for (const term of hashedTerms) hashFilter[hashOf(term) & HASH_BITS] = 1;
  }
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c < 128) {
      if (ASCII_WORD_CHAR[c] === 0) {
        i++;
        continue;
      }
      const start = i;
      let h = FNV_OFFSET;
      do {
        h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), FNV_PRIME);
        if (++i === n) break;
        c = text.charCodeAt(i);
      } while (c < 128 && ASCII_WORD_CHAR[c] === 1);
      if (i === n || c < 128 || !startsWord(text, i)) {
        pushWord(start, i, hashFilter[h & HASH_BITS] === 1 && matched.has(text.slice(start, i).toLowerCase()));
        continue;
      }
      // A word character beyond ASCII goes on with the word.
      i = wordEnd(text, i, n);
      pushRun(text, start, i, lang, matched);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) wide = true;
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (!isWordChar(cp)) {
      i += width;
      continue;
    }
    const start = i;
    i = wordEnd(text, i + width, n);
    pushRun(text, start, i, lang, matched);
  }
  return wide;
}

/** Whether a word character starts at i (a surrogate pair read as one code point). */
function startsWord(text: string, i: number): boolean {
  return isWordChar(text.codePointAt(i)!);
}

/** Where the run of word characters going on at i ends. */
function wordEnd(text: string, i: number, n: number): number {
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) wide = true;
    const cp = c < 0xd800 ? c : text.codePointAt(i)!;
    if (!isWordChar(cp)) break;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/** A run of word characters, not all ASCII, as its word (folded) or, in unspaced script, its words. */
function pushRun(text: string, start: number, end: number, lang: string, matched: MatchedTerms): void {
  const run = text.slice(start, end);
  if (!UNSPACED.test(run)) {
    pushWord(start, end, matched.has(fold(run)));
    return;
  }
  for (const seg of segmenter(lang).segment(run)) {
    if (!seg.isWordLike) continue;
    const term = fold(seg.segment);
    if (term) pushWord(start + seg.index, start + seg.index + seg.segment.length, matched.has(term));
  }
}

/** FNV-1a of the code units of a term, as scan() hashes a word's lowercase letters. */
function hashOf(term: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), FNV_PRIME);
  return h;
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
  if (codePoints.length < text.length + 1) codePoints = new Int32Array(Math.max(text.length + 1, codePoints.length * 2));
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

/** The text from `from` to `to` (UTF-16 offsets) escaped, the scanned matched words in it in <em>. */
function render(text: string, from: number, to: number, highlight: boolean): string {
  let out = "";
  let at = from;
  if (highlight) {
    for (let t = 0; t < count; t++) {
      if (!matchedAt[t] || ends[t]! <= from || starts[t]! >= to) continue;
      out += escapeHtml(text.slice(at, starts[t]!)) + "<em>" + escapeHtml(text.slice(starts[t]!, ends[t]!)) + "</em>";
      at = ends[t]!;
    }
  }
  return out + escapeHtml(text.slice(at, to));
}

export function formatTitle(title: string, matched: MatchedTerms, highlight: boolean, lang: string): string {
  scan(title, lang, matched);
  return render(title, 0, title.length, highlight);
}

export function formatText(text: string, matched: MatchedTerms, cropLength: number, highlight: boolean, lang: string): string {
  const cp = scan(text, lang, matched) ? codePointOffsets(text) : sameOffsets(text.length);
  const length = cp[text.length]!;
  if (length <= cropLength) return render(text, 0, text.length, highlight);

  // The window of cropLength code points holding the most matched words.
  if (hits.length < count) hits = new Int32Array(Math.max(count, hits.length * 2));
  let hitCount = 0;
  for (let t = 0; t < count; t++) if (matchedAt[t]) hits[hitCount++] = t;
  let bestFirst = 0;
  let bestCount = 0;
  for (let i = 0, j = 0; i < hitCount; i++) {
    if (j < i) j = i;
    while (j < hitCount && cp[ends[hits[j]!]!]! - cp[starts[hits[i]!]!]! <= cropLength) j++;
    if (j - i > bestCount) {
      bestCount = j - i;
      bestFirst = i;
    }
  }
  let start = 0;
  if (bestCount) {
    const spanStart = cp[starts[hits[bestFirst]!]!]!;
    const spanEnd = cp[ends[hits[bestFirst + bestCount - 1]!]!]!;
    start = Math.max(0, spanStart - Math.floor((cropLength - (spanEnd - spanStart)) / 2));
  }
  let end = Math.min(length, start + cropLength);
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
  if (from < 0) {
    // Not one whole word fits (a very long word): cut inside it.
    const chars = Array.from(text);
    return (start > 0 ? CROP_MARKER : "") + escapeHtml(chars.slice(start, end).join("")) + (end < length ? CROP_MARKER : "");
  }
  if (start === 0) from = 0;
  if (end === length) to = text.length;
  // Keep punctuation that closes the last word (a full stop, a bracket) when it fits.
  while (to < text.length && cp[to + 1]! - cp[from]! <= cropLength && CLOSING.test(text[to]!)) to++;
  const body = render(text, from, to, highlight);
  return (from > 0 ? CROP_MARKER : "") + body + (to < text.length ? CROP_MARKER : "");
}
