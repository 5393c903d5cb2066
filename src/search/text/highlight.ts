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

/** Room for the words of a text of n code units (at most one word a code unit). */
function wordRoom(n: number): void {
  if (starts.length > n) return;
  const size = Math.max(n + 1, starts.length * 2);
  starts = new Int32Array(size);
  ends = new Int32Array(size);
  matchedAt = new Uint8Array(size);
}

function pushWord(start: number, end: number, matched: boolean): void {
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

/** Per ASCII code: its lowercase code for a word character (digits and letters), 0 for the others. */
const ASCII_WORD_LOWER = new Uint8Array(128);
for (let c = 0; c < 128; c++)
  ASCII_WORD_LOWER[c] = isWordChar(c) ? String.fromCharCode(c).toLowerCase().charCodeAt(0) : 0;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** The terms a text's words are highlighted for: all that may be (`candidates`, one set shared by many hits), and whether one found in the text is (`has`). */
export interface MatchedTerms {
  /** Every term has() may take: has() is asked only of these. */
  readonly candidates: ReadonlySet<string>;
  /** Asked at most once per candidate (the answer is kept for the object's later texts). */
  has(term: string): boolean;
}

/**
 * The candidates of the last scan, as an open-addressing table of their FNV-1a hashes: a word
 * is looked up by the hash scan() makes as it reads it, and compared letter by letter, without
 * making its string. Slots hold a candidate's index + 1 (0: empty).
 */
let tableFor: ReadonlySet<string> | undefined;
let tableTerms: string[] = [];
let tableMask = 0;
let slotHashes = new Int32Array(0);
let slots = new Int32Array(0);
/**
 * The answers of has() of each MatchedTerms, by candidate (0 not asked yet, 1 matched, 2 not),
 * for the current table. Weakly held: a hit's terms reach its engine, which a swap lets go.
 */
let answersOf = new WeakMap<MatchedTerms, Uint8Array>();
/** The answers of the MatchedTerms of the scan under way, once looked up (undefined between scans). */
let scanAnswers: Uint8Array | undefined;
/** Whether the text scanned has a high surrogate (set by scan and wordEnd). */
let wide = false;

/** Makes the candidates' table, at most a quarter full (and 4,096 slots at least: few words reach the letter comparison). */
function tableOf(candidates: ReadonlySet<string>): void {
  tableFor = candidates;
  tableTerms = [...candidates];
  let size = 4096;
  while (size < tableTerms.length * 4) size *= 2;
  if (slots.length !== size) {
    slots = new Int32Array(size);
    slotHashes = new Int32Array(size);
  } else slots.fill(0);
  tableMask = size - 1;
  for (let c = 0; c < tableTerms.length; c++) {
    const h = hashOf(tableTerms[c]!);
    let at = h & tableMask;
    while (slots[at] !== 0) at = (at + 1) & tableMask;
    slots[at] = c + 1;
    slotHashes[at] = h;
  }
  answersOf = new WeakMap();
}

/** Whether candidate c is matched, asked of `matched` once. */
function answer(matched: MatchedTerms, c: number): boolean {
  let answers = scanAnswers;
  if (!answers) {
    answers = answersOf.get(matched);
    if (!answers) answersOf.set(matched, (answers = new Uint8Array(tableTerms.length)));
    scanAnswers = answers;
  }
  let a = answers[c]!;
  if (a === 0) answers[c] = a = matched.has(tableTerms[c]!) ? 1 : 2;
  return a === 1;
}

/** Whether the ASCII word text[start, end), lowercased, whose FNV-1a hash is h, is a matched candidate. */
function asciiWordMatched(text: string, start: number, end: number, h: number, matched: MatchedTerms): boolean {
  const n = end - start;
  for (let at = h & tableMask; slots[at] !== 0; at = (at + 1) & tableMask) {
    if (slotHashes[at] !== h) continue;
    const c = slots[at]! - 1;
    const term = tableTerms[c]!;
    if (term.length !== n) continue;
    let k = 0;
    while (k < n && lower(text.charCodeAt(start + k)) === term.charCodeAt(k)) k++;
    if (k === n) return answer(matched, c);
  }
  return false;
}

/** Whether a folded term is a matched candidate. */
function termMatched(term: string, matched: MatchedTerms): boolean {
  const h = hashOf(term);
  for (let at = h & tableMask; slots[at] !== 0; at = (at + 1) & tableMask) {
    if (slotHashes[at] === h && tableTerms[slots[at]! - 1] === term) return answer(matched, slots[at]! - 1);
  }
  return false;
}

const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * Scans the words of a text into the scratch arrays, as tokens() finds them, marking those
 * whose folded form `matched` holds. ASCII words (most words of most texts) are read in a
 * loop of their own that hashes their lowercase letters as it goes, and are looked up by that
 * hash. Returns whether the text has a high surrogate, that is whether its code-point offsets
 * differ from its UTF-16 offsets.
 */
function scan(text: string, lang: string, matched: MatchedTerms): boolean {
  wide = false;
  scanAnswers = undefined;
  // The hits of a search share their candidates: their table is made once.
  if (matched.candidates !== tableFor) tableOf(matched.candidates);
  const n = text.length;
  wordRoom(n);
  // The ASCII words are written through locals (module bindings cost more in this loop); count is kept in step around pushRun.
  const wordStarts = starts;
  const wordEnds = ends;
  const wordMatched = matchedAt;
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
      if (i === n || c < 128 || !startsWord(text, i)) {
        wordStarts[words] = start;
        wordEnds[words] = i;
        wordMatched[words] = filled[h & mask] !== 0 && asciiWordMatched(text, start, i, h, matched) ? 1 : 0;
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
    if (!isWordChar(cp)) {
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
    pushWord(start, end, termMatched(fold(run), matched));
    return;
  }
  for (const seg of segmenter(lang).segment(run)) {
    if (!seg.isWordLike) continue;
    const term = fold(seg.segment);
    if (term) pushWord(start + seg.index, start + seg.index + seg.segment.length, termMatched(term, matched));
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

/** The text from `from` to `to` (UTF-16 offsets) escaped, the scanned matched words in it in <em>. */
function render(text: string, from: number, to: number, highlight: boolean): string {
  let out = "";
  let at = from;
  if (highlight) {
    for (let t = 0; t < count; t++) {
      if (!matchedAt[t] || ends[t]! <= from || starts[t]! >= to) continue;
      out += `${escapeHtml(text.slice(at, starts[t]!))}<em>${escapeHtml(text.slice(starts[t]!, ends[t]!))}</em>`;
      at = ends[t]!;
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
  if (from < 0) {
    // Not one whole word fits (a very long word): cut inside it.
    const chars = Array.from(text);
    return (
      (start > 0 ? CROP_MARKER : "") + escapeHtml(chars.slice(start, end).join("")) + (end < length ? CROP_MARKER : "")
    );
  }
  if (start === 0) from = 0;
  if (end === length) to = text.length;
  // Keep punctuation that closes the last word (a full stop, a bracket) when it fits.
  while (to < text.length && cp[to + 1]! - cp[from]! <= cropLength && CLOSING.test(text[to]!)) to++;
  const body = render(text, from, to, highlight);
  return (from > 0 ? CROP_MARKER : "") + body + (to < text.length ? CROP_MARKER : "");
}
