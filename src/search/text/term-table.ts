/**
 * The terms highlight.ts looks a text's words up in: the candidates of the last scan, as an
 * open-addressing table of their FNV-1a hashes. A word is looked up by the hash the scan makes
 * as it reads it, and compared letter by letter, without making its string. Slots hold a
 * candidate's index + 1 (0: empty).
 */

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** The terms a text's words are highlighted for: all that may be (`candidates`, one set shared by many hits), and whether one found in the text is (`has`). */
export interface MatchedTerms {
  /** Every term has() may take: has() is asked only of these. */
  readonly candidates: ReadonlySet<string>;
  /** Asked at most once per candidate (the answer is kept for the object's later texts). */
  has(term: string): boolean;
  /** Sequences of candidates highlighted wherever they stand as consecutive words (D95). */
  readonly phrases?: readonly Phrase[];
}

/**
 * Words highlighted where they stand together, each then whether has() holds it or not: a quoted
 * phrase, or a query word written in unspaced script that the segmenter split.
 */
export interface Phrase {
  readonly words: readonly string[];
  /** Its last word is the query's last, being typed: a word it begins (one has() holds) stands for it. */
  readonly prefix: boolean;
}

let tableFor: ReadonlySet<string> | undefined;
let tableTerms: string[] = [];
export let tableMask = 0;
let slotHashes = new Int32Array(0);
export let slots = new Int32Array(0);
/**
 * The answers of has() of each MatchedTerms, by candidate (0 not asked yet, 1 matched, 2 not),
 * for the current table. Weakly held: a hit's terms reach its engine, which a swap lets go.
 */
let answersOf = new WeakMap<MatchedTerms, Uint8Array>();
/** The answers of the MatchedTerms of the scan under way, once looked up (undefined between scans). */
let scanAnswers: Uint8Array | undefined;

/** Readies the table for a scan with `matched`'s candidates: made again only for another set of them (the hits of a search share theirs). */
export function startScan(matched: MatchedTerms): void {
  scanAnswers = undefined;
  if (matched.candidates !== tableFor) tableOf(matched.candidates);
}

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
export function answer(matched: MatchedTerms, c: number): boolean {
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

/** The candidate the ASCII word text[start, end), lowercased, whose FNV-1a hash is h, is: its index, or -1. */
export function asciiCandidate(text: string, start: number, end: number, h: number): number {
  const n = end - start;
  for (let at = h & tableMask; slots[at] !== 0; at = (at + 1) & tableMask) {
    if (slotHashes[at] !== h) continue;
    const c = slots[at]! - 1;
    const term = tableTerms[c]!;
    if (term.length !== n) continue;
    let k = 0;
    while (k < n && lower(text.charCodeAt(start + k)) === term.charCodeAt(k)) k++;
    if (k === n) return c;
  }
  return -1;
}

/** Candidate c's term. */
export const candidateTerm = (c: number): string => tableTerms[c]!;

/** The candidate a folded term is: its index, or -1. */
export function candidateOf(term: string): number {
  const h = hashOf(term);
  for (let at = h & tableMask; slots[at] !== 0; at = (at + 1) & tableMask) {
    if (slotHashes[at] === h && tableTerms[slots[at]! - 1] === term) return slots[at]! - 1;
  }
  return -1;
}

const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/** FNV-1a of the code units of a term, as scan() hashes a word's lowercase letters. */
function hashOf(term: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), FNV_PRIME);
  return h;
}
