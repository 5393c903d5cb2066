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

/**
 * Scans the words of a text into the scratch arrays, as tokens() finds them, marking those
 * whose folded form `matched` holds. ASCII words are folded (lowercased) only when the hash
 * of their lowercase letters is some matched term's.
 */
let hashedTerms: ReadonlySet<string> | undefined;
let hashes = new Set<number>();

function scan(text: string, lang: string, matched: ReadonlySet<string>): void {
  count = 0;
  // A hit's title and text are scanned for the same terms: their hashes are made once.
  if (matched !== hashedTerms) {
    hashedTerms = matched;
    hashes = new Set<number>();
    for (const term of matched) hashes.add(hashOf(term, 0, term.length, false));
  }
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    let cp = c;
    let width = 1;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = (c - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        width = 2;
      }
    }
    if (!isWordChar(cp)) {
      i += width;
      continue;
    }
    const start = i;
    let ascii = cp < 128;
    i += width;
    while (i < n) {
      c = text.charCodeAt(i);
      cp = c;
      width = 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          cp = (c - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          width = 2;
        }
      }
      if (!isWordChar(cp)) break;
      if (cp >= 128) ascii = false;
      i += width;
    }
    if (ascii) {
      pushWord(start, i, hashes.has(hashOf(text, start, i, true)) && matched.has(text.slice(start, i).toLowerCase()));
      continue;
    }
    const run = text.slice(start, i);
    if (!UNSPACED.test(run)) {
      pushWord(start, i, matched.has(fold(run)));
      continue;
    }
    for (const seg of segmenter(lang).segment(run)) {
      if (!seg.isWordLike) continue;
      const term = fold(seg.segment);
      if (term) pushWord(start + seg.index, start + seg.index + seg.segment.length, matched.has(term));
    }
  }
}

/** FNV-1a of the code units of s from start to end, ASCII capitals lowercased when `lower`. */
function hashOf(s: string, start: number, end: number, lower: boolean): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    let c = s.charCodeAt(i);
    if (lower && c >= 65 && c <= 90) c += 32;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h;
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

export function formatTitle(title: string, matched: ReadonlySet<string>, highlight: boolean, lang: string): string {
  scan(title, lang, matched);
  return render(title, 0, title.length, highlight);
}

export function formatText(text: string, matched: ReadonlySet<string>, cropLength: number, highlight: boolean, lang: string): string {
  scan(text, lang, matched);
  const cp = codePointOffsets(text);
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
