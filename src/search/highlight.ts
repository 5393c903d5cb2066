/**
 * D9: a hit's `_formatted` text — cropped to `crop_length` code points around the densest
 * run of matched words, cut at word boundaries with "…", matched words in <em>, and every
 * other character HTML-escaped.
 */
import { tokens, type Token } from "./analyze";

export const CROP_MARKER = "…";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
export function escapeHtml(s: string): string {
  return s.replace(/[&<>]/g, (c) => ESCAPES[c]!);
}

/** Code-point offset of every UTF-16 offset that starts a code point. */
function codePointOffsets(text: string): Int32Array {
  const map = new Int32Array(text.length + 1);
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

function render(text: string, toks: Token[], from: number, to: number, isMatch: (t: Token) => boolean, highlight: boolean): string {
  let out = "";
  let at = from;
  for (const t of toks) {
    if (t.end <= from || t.start >= to || !highlight || !isMatch(t)) continue;
    out += escapeHtml(text.slice(at, t.start)) + "<em>" + escapeHtml(text.slice(t.start, t.end)) + "</em>";
    at = t.end;
  }
  return out + escapeHtml(text.slice(at, to));
}

export function formatTitle(title: string, matched: ReadonlySet<string>, highlight: boolean, lang: string): string {
  return render(title, tokens(title, lang), 0, title.length, (t) => matched.has(t.term), highlight);
}

export function formatText(text: string, matched: ReadonlySet<string>, cropLength: number, highlight: boolean, lang: string): string {
  const toks = tokens(text, lang);
  const isMatch = (t: Token) => matched.has(t.term);
  const cp = codePointOffsets(text);
  const length = cp[text.length]!;
  if (length <= cropLength) return render(text, toks, 0, text.length, isMatch, highlight);

  // The window of cropLength code points holding the most matched words.
  const hits = toks.filter(isMatch);
  let bestFirst = 0;
  let bestCount = 0;
  for (let i = 0, j = 0; i < hits.length; i++) {
    if (j < i) j = i;
    while (j < hits.length && cp[hits[j]!.end]! - cp[hits[i]!.start]! <= cropLength) j++;
    if (j - i > bestCount) {
      bestCount = j - i;
      bestFirst = i;
    }
  }
  let start = 0;
  if (bestCount) {
    const spanStart = cp[hits[bestFirst]!.start]!;
    const spanEnd = cp[hits[bestFirst + bestCount - 1]!.end]!;
    start = Math.max(0, spanStart - Math.floor((cropLength - (spanEnd - spanStart)) / 2));
  }
  let end = Math.min(length, start + cropLength);
  start = Math.max(0, end - cropLength);

  // Cut at word boundaries: drop a word the window cuts through, at either end.
  let from = -1;
  let to = -1;
  for (const t of toks) {
    const s = cp[t.start]!;
    const e = cp[t.end]!;
    if (s >= start && e <= end) {
      if (from < 0) from = t.start;
      to = t.end;
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
  while (to < text.length && cp[to + 1]! - cp[from]! <= cropLength && /[^\s\p{L}\p{N}]/u.test(text[to]!)) to++;
  const body = render(text, toks, from, to, isMatch, highlight);
  return (from > 0 ? CROP_MARKER : "") + body + (to < text.length ? CROP_MARKER : "");
}
