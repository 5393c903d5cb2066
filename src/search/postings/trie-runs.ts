/** Runs of the trie that a vocabulary's sorted keys imply, as its typo walk steps through them (vocabulary.ts). */

/**
 * For each key t: how many keys its run of the implied trie holds, when t starts one that is
 * not its node's first child (0 when that is 65,536 or more, or t = 0). Such a run is the keys
 * sharing with t one code unit more than t shares with the key before it: it ends at the first
 * key that shares no more with the key before it than t does. With it a typo walk steps from a
 * child to the next with one read, instead of searching for the end of each (2 bytes a key).
 */
export function runSkips(chars: Uint16Array, starts: Uint32Array): Uint16Array {
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
    let share = 0;
    if (u > 0 && u < size) {
      const a = starts[u - 1]!;
      const b = starts[u]!;
      const n = Math.min(b - a, starts[u + 1]! - b);
      while (share < n && chars[a + share] === chars[b + share]) share++;
    }
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
