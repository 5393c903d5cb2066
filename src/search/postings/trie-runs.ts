/** Runs of the trie that a vocabulary's sorted keys imply, as its typo walk steps through them (vocabulary.ts). */

/**
 * For each key t: how many keys its run of the implied trie holds, when t starts one that is
 * not its node's first child (0 when that is 65,536 or more, or t = 0). Such a run is the keys
 * sharing with t one code unit more than t shares with the key before it: it ends at the first
 * key that shares no more with the key before it than t does. With it a typo walk steps from a
 * child to the next with one read, instead of searching for the end of each (2 bytes a key).
 */
export function runSkips(chars: Uint16Array, starts: Uint32Array, shares = keyShares(chars, starts)): Uint16Array {
  const size = starts.length - 1;
  const skips = new Uint16Array(size);
  // Keys whose run has not ended yet, and what each shares with the key before it: the shares
  // increase up the stack, so it is never deeper than the longest key, plus one.
  let longest = 0;
  for (let t = 0; t < size; t++) longest = Math.max(longest, starts[t + 1]! - starts[t]!);
  const open = new Uint32Array(longest + 2);
  const shared = new Uint32Array(longest + 2);
  let depth = 0;
  for (let u = 0; u <= size; u++) {
    const share = u < size ? shares[u]! : 0;
    // Past the last key, every run open ends.
    while (depth > 0 && (u === size || shared[depth - 1]! >= share)) {
      const t = open[--depth]!;
      if (t > 0 && u - t < 65536) skips[t] = u - t;
    }
    open[depth] = u;
    shared[depth++] = share;
  }
  return skips;
}

/**
 * What each key shares with the key before it, in code units (0 for the first): one pass over
 * the keys, for runSkips() and trieTop() both (each read them apart before, at 5M chunks 0.2–0.5 s a pass).
 */
export function keyShares(chars: Uint16Array, starts: Uint32Array): Uint16Array {
  const size = starts.length - 1;
  const shares = new Uint16Array(size);
  for (let u = 1; u < size; u++) {
    const a = starts[u - 1]!;
    const b = starts[u]!;
    const n = Math.min(b - a, starts[u + 1]! - b, 65535);
    let share = 0;
    while (share < n && chars[a + share] === chars[b + share]) share++;
    shares[u] = share;
  }
  return shares;
}

/**
 * The end of the run of keys from lo whose code unit at `depth` is k (keys lo..hi-1 share
 * their first `depth`, so those with k there are contiguous): galloping, since most runs in a
 * trie walk are short.
 */
export function groupEnd(
  chars: Uint16Array,
  starts: Uint32Array,
  lo: number,
  hi: number,
  depth: number,
  k: number,
): number {
  let inside = lo;
  let step = 1;
  while (lo + step < hi && chars[starts[lo + step]! + depth] === k) {
    inside = lo + step;
    step *= 2;
  }
  let outside = Math.min(lo + step, hi);
  while (outside - inside > 1) {
    const mid = (inside + outside) >>> 1;
    if (chars[starts[mid]! + depth] === k) inside = mid;
    else outside = mid;
  }
  return outside;
}

/** How many of the implied trie's top levels trieTop() lays out: at 5M chunks, 663K nodes (9.3 MB) where a 2-typo walk steps most. */
export const TOP_LEVELS = 5;

/**
 * The top levels of the trie a vocabulary's sorted keys imply, laid out node by node, level by
 * level: node i of level d (its prefix of d code units) has the letter letters[d][i], holds the
 * keys lo[d][i]…hi[d][i]-1, and its children are nodes firstChild[d][i]…firstChild[d][i+1]-1 of
 * level d+1 (level 0 is the root). A typo walk reads a node's children from these consecutive
 * entries rather than from the first key of each child, scattered through the vocabulary (a
 * cache miss or three a child): its top levels are where a walk with two typos steps most.
 */
export interface TrieTop {
  levels: number;
  letters: Uint16Array[];
  lo: Uint32Array[];
  hi: Uint32Array[];
  firstChild: Uint32Array[];
}

export function trieTop(
  chars: Uint16Array,
  starts: Uint32Array,
  levels: number,
  shares = keyShares(chars, starts),
): TrieTop {
  const size = starts.length - 1;
  // What key u shares with the key before it, up to `levels`: the levels from there to its length start a node.
  const shared = (u: number): number => Math.min(levels, shares[u]!);
  const counts = new Uint32Array(levels + 1);
  counts[0] = 1;
  for (let u = 0; u < size; u++) {
    const last = Math.min(levels, starts[u + 1]! - starts[u]!);
    for (let d = shared(u) + 1; d <= last; d++) counts[d]!++;
  }
  const top: TrieTop = { levels, letters: [], lo: [], hi: [], firstChild: [] };
  for (let d = 0; d <= levels; d++) {
    top.letters.push(new Uint16Array(counts[d]!));
    top.lo.push(new Uint32Array(counts[d]!));
    top.hi.push(new Uint32Array(counts[d]!));
    top.firstChild.push(new Uint32Array(d < levels ? counts[d]! + 1 : 0));
  }
  const made = new Uint32Array(levels + 1);
  const open = new Uint8Array(levels + 1);
  made[0] = 1;
  top.hi[0]![0] = size;
  for (let u = 0; u < size; u++) {
    const s = shared(u);
    // The nodes below what u shares end before it.
    for (let d = s + 1; d <= levels; d++)
      if (open[d]) {
        top.hi[d]![made[d]! - 1] = u;
        open[d] = 0;
      }
    const last = Math.min(levels, starts[u + 1]! - starts[u]!);
    for (let d = s + 1; d <= last; d++) {
      const i = made[d]!++;
      open[d] = 1;
      top.letters[d]![i] = chars[starts[u]! + d - 1]!;
      top.lo[d]![i] = u;
      if (d < levels) top.firstChild[d]![i] = made[d + 1]!;
    }
  }
  for (let d = 1; d <= levels; d++) if (open[d]) top.hi[d]![made[d]! - 1] = size;
  for (let d = 0; d < levels; d++) top.firstChild[d]![counts[d]!] = counts[d + 1]!;
  return top;
}
