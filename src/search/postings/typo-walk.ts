/**
 * The typo walks of a vocabulary (Vocabulary.typoTerms): a walk of the trie its sorted keys
 * imply, by bit masks (D125) or by rows of the distance matrix, with D98's first-letter rule.
 */
import { groupEnd, type TrieTop } from "./trie-runs";

/** A vocabulary's keys as the walks read them, and runSkips() of them. */
export interface TrieKeys {
  chars: Uint16Array;
  starts: Uint32Array;
  size: number;
  skips: Uint16Array;
  /** The trie's top levels laid out node by node (trieTop()): the masks walk steps through them there. */
  top: TrieTop;
}

/** The longest query walked with bit masks (typoTermsByMasks): its letters and the empty prefix fit 31 bits. */
export const MASKS_UP_TO = 30;

/**
 * Vocabulary.typoTerms() for a query of at most MASKS_UP_TO code units and 2 typos: the same walk, each
 * row kept as bit masks, one for each number of typos (bit i: the query's first i letters
 * align with the key's so far with that many typos or fewer), stepped by a letter in a few
 * word operations (the Levenshtein automaton simulated bit-parallel, as Wu and Manber's agrep
 * and Baeza-Yates and Navarro's NFA do; a swap from the masks two letters up). D125.
 */
export function walkByMasks(
  trie: TrieKeys,
  letters: Int32Array,
  query: string,
  max: number,
  found: (term: number, distance: number) => void,
): void {
  const { chars, starts, size } = trie;
  const { levels, letters: topLetters, lo: topLo, hi: topHi, firstChild } = trie.top;
  const m = query.length;
  const whole = 2 ** (m + 1) - 1;
  const end = 1 << m;
  for (let j = 1; j <= m; j++) letters[query.charCodeAt(j - 1)]! |= 1 << j;
  const letterEnd = firstLetterUnits(query);
  const depthLimit = m + max;
  /** The fewest typos, up to `limit`, with which the key so far is the query: -1 when more. */
  const distance = (r0: number, r1: number, r2: number, limit: number): number =>
    r0 & end ? 0 : limit >= 1 && r1 & end ? 1 : limit >= 2 && r2 & end ? 2 : -1;
  // r0..r2: the masks at `depth`; s0, s1: at depth - 1; last: the mask of the key's letter at depth;
  // node: the node's index in its level of the top levels (while depth < levels).
  const walk = (
    lo: number,
    hi: number,
    depth: number,
    limit: number,
    extra: number,
    r0: number,
    r1: number,
    r2: number,
    s0: number,
    s1: number,
    last: number,
    node: number,
  ): void => {
    if (starts[lo + 1]! - starts[lo]! === depth) {
      // A key shorter than the query's first letter (the empty one) has not that letter either.
      if (depth < letterEnd && !extra) {
        const d = max > 1 ? distance(r0, r1, r2, max - 1) : -1;
        if (d >= 0) found(lo, d + 1);
      } else {
        const d = distance(r0, r1, r2, limit);
        if (d >= 0) found(lo, d + extra);
      }
      lo++;
    }
    if (depth >= depthLimit) return;
    const first = lo;
    const r = depth + 1;
    // In the top levels a node's children are consecutive entries of the next level; below, each child's first key is read.
    const packed = depth < levels;
    let child = packed ? firstChild[depth]![node]! : 0;
    const childrenEnd = packed ? firstChild[depth]![node + 1]! : 0;
    while (packed ? child < childrenEnd : lo < hi) {
      let k: number;
      let next: number;
      if (packed) {
        k = topLetters[r]![child]!;
        lo = topLo[r]![child]!;
        next = topHi[r]![child]!;
      } else {
        k = chars[starts[lo]! + depth]!;
        next = childEnd(trie, lo, hi, first, depth, k);
      }
      const b = letters[k]!;
      // A letter matched, inserted, replaced or (one typo more) a query letter left out; or two swapped.
      const n0 = (r0 << 1) & b;
      const n1 = (((r1 << 1) & b) | r0 | (r0 << 1) | (n0 << 1) | ((s0 << 2) & (b << 1) & last)) & whole;
      const n2 = max > 1 ? (((r2 << 1) & b) | r1 | (r1 << 1) | (n1 << 1) | ((s1 << 2) & (b << 1) & last)) & whole : 0;
      if (r > letterEnd || extra || k === query.charCodeAt(r - 1)) {
        if ((limit === 0 ? n0 : limit === 1 ? n1 : n2) !== 0)
          walk(lo, next, r, limit, extra, n0, n1, n2, r0, r1, b, child);
      } else if (max > 1 && (max === 2 ? n1 : n0) !== 0) walk(lo, next, r, max - 1, 1, n0, n1, n2, r0, r1, b, child);
      lo = next;
      child++;
    }
  };
  try {
    if (size) walk(0, size, 0, max, 0, 1, 3 & whole, 7 & whole, 0, 0, 0, 0);
  } finally {
    for (let j = 1; j <= m; j++) letters[query.charCodeAt(j - 1)] = 0;
  }
}

/** Vocabulary.typoTerms() with the rows of the distance matrix computed cell by cell: any length, any number of typos. */
export function walkByRows(
  trie: TrieKeys,
  scratch: (k: number, n: number) => Uint16Array,
  query: string,
  max: number,
  found: (term: number, distance: number) => void,
): void {
  const { chars, starts, size } = trie;
  const m = query.length;
  const width = m + 1;
  const depthLimit = m + max;
  // Scratch rows, query and key letters, zeroed as new arrays would be (typo lookups run at every search).
  const rows = scratch(0, (depthLimit + 1) * width);
  for (let j = 0; j <= m; j++) rows[j] = j;
  const q = scratch(1, m + 1);
  for (let j = 1; j <= m; j++) q[j] = query.charCodeAt(j - 1);
  // The key's letters so far, from index 1.
  const key = scratch(2, depthLimit + 1);
  // Keys lo..hi-1 share their first `depth` code units, whose rows are computed.
  // The code units that hold the query's first letter: its own, or a non-ASCII letter's two
  // bucket characters and its own (analyze.ts, indexKey).
  const letterEnd = firstLetterUnits(query);
  // `limit`: the typos left to the branch; `extra`: what its first letter adds to a distance.
  const walk = (lo: number, hi: number, depth: number, limit: number, extra: number): void => {
    if (starts[lo + 1]! - starts[lo]! === depth) {
      const d = rows[depth * width + m]!;
      // A key shorter than the query's first letter (the empty one) has not that letter either.
      if (depth < letterEnd && !extra) {
        if (max > 1 && d <= max - 1) found(lo, d + 1);
      } else if (Math.abs(depth - m) <= limit && d <= limit) found(lo, d + extra);
      lo++;
    }
    if (depth >= depthLimit) return;
    // The first child's run is searched for; each later one's is read from skips.
    const first = lo;
    const r = depth + 1;
    const row = r * width;
    const above = row - width;
    // Only the band of columns within max of the diagonal can hold max or less: the rest is
    // not computed, and a sentinel either side stands for it.
    const bandLo = r > max ? r - max : 1;
    const bandHi = Math.min(r + max, m);
    while (lo < hi) {
      // Every key left is longer than depth: the shortest sorts first.
      const k = chars[starts[lo]! + depth]!;
      const end = childEnd(trie, lo, hi, first, depth, k);
      key[r] = k;
      rows[row] = r;
      let least = r;
      if (bandLo > 1) rows[row + bandLo - 1] = max + 1;
      if (bandHi < m) rows[row + bandHi + 1] = max + 1;
      for (let j = bandLo; j <= bandHi; j++) {
        let d = rows[above + j - 1]! + (k === q[j] ? 0 : 1);
        const del = rows[above + j]! + 1;
        if (del < d) d = del;
        const ins = rows[row + j - 1]! + 1;
        if (ins < d) d = ins;
        if (r > 1 && j > 1 && k === q[j - 1] && key[r - 1] === q[j]) {
          const swap = rows[above - width + j - 2]! + 1;
          if (swap < d) d = swap;
        }
        rows[row + j] = d;
        if (d < least) least = d;
      }
      if (r > letterEnd || extra || k === q[r]) {
        if (least <= limit) walk(lo, end, r, limit, extra);
      } else if (max > 1 && least <= max - 1) walk(lo, end, r, max - 1, 1);
      lo = end;
    }
  };
  if (size) walk(0, size, 0, max, 0);
}

/**
 * The end of the child run of keys lo..hi-1 (which share their first `depth` code units) that
 * starts at lo with code unit k: read from the skips but for a node's first child (`first`),
 * which is searched for.
 */
function childEnd(trie: TrieKeys, lo: number, hi: number, first: number, depth: number, k: number): number {
  const { chars, starts, skips } = trie;
  const skip = lo > first ? skips[lo]! : 0;
  if (skip) return lo + skip;
  return chars[starts[hi - 1]! + depth] === k ? hi : groupEnd(chars, starts, lo, hi, depth, k);
}

/**
 * The code units that hold a query's first letter: its own, or a non-ASCII letter's two bucket
 * characters and its own (analyze.ts, indexKey).
 */
function firstLetterUnits(query: string): number {
  const m = query.length;
  const second = query.charCodeAt(1);
  return Math.min(m, m > 2 && query.charCodeAt(0) >= 0xe000 && second >= 0xe800 && second < 0xe820 ? 3 : 1);
}
