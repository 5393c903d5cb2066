/**
 * The vocabulary as it was before vocabulary.ts, kept as the oracle its tests and benchmark
 * compare against: MiniSearch's radix tree of Maps built from sorted keys, and the typo walk
 * over it (shard.ts at 79cf59f, unchanged).
 */

/**
 * The keys within `max` edits of `query`, with their term numbers and distances, where an edit
 * is a letter inserted, deleted or replaced, or two adjacent letters swapped ("einstien"): the
 * optimal string alignment distance, as Meilisearch counts typos. One walk of the radix tree,
 * one row of the distance matrix per key letter (its band within max of the diagonal, as
 * MiniSearch's fuzzy search computes), a branch left as soon as its row exceeds max.
 * Meilisearch's first-letter rule (D98) applied after the walk, as a filter: a key whose first
 * letter is not the query's is kept only at one edit, counted as two, and only when max is 2.
 */
export function typoNeighbours(tree: Map<string, unknown>, query: string, max: number): [string, number, number][] {
  const out: [string, number, number][] = [];
  const m = query.length;
  const width = m + 1;
  const depthLimit = m + max;
  const rows = new Uint16Array((depthLimit + 1) * width);
  for (let j = 0; j <= m; j++) rows[j] = j;
  const q = new Uint16Array(m + 1);
  for (let j = 1; j <= m; j++) q[j] = query.charCodeAt(j - 1);
  // The key's letters so far, from index 1.
  const key = new Uint16Array(depthLimit + 1);
  const walk = (node: Map<string, unknown>, depth: number, prefix: string) => {
    for (const [label, child] of node) {
      if (label === "") {
        const d = rows[depth * width + m]!;
        if (Math.abs(depth - m) <= max && d <= max) out.push([prefix, child as number, d]);
        continue;
      }
      let r = depth;
      let alive = true;
      for (let c = 0; c < label.length; c++) {
        if (r >= depthLimit) {
          alive = false;
          break;
        }
        r++;
        const k = label.charCodeAt(c);
        key[r] = k;
        const row = r * width;
        const above = row - width;
        rows[row] = r;
        let least = r;
        // Only the band of columns within max of the diagonal can hold max or less: the rest
        // is not computed, and a sentinel either side stands for it.
        const lo = r > max ? r - max : 1;
        const hi = Math.min(r + max, m);
        if (lo > 1) rows[row + lo - 1] = max + 1;
        if (hi < m) rows[row + hi + 1] = max + 1;
        for (let j = lo; j <= hi; j++) {
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
        if (least > max) {
          alive = false;
          break;
        }
      }
      if (alive) walk(child as Map<string, unknown>, r, prefix + label);
    }
  };
  walk(tree, 0, "");
  // The query's first letter: its first code unit, or a non-ASCII word's bucket characters and its own.
  const bucketed =
    query.length > 2 && query.charCodeAt(0) >= 0xe000 && query.charCodeAt(1) >= 0xe800 && query.charCodeAt(1) < 0xe820;
  const first = query.slice(0, bucketed ? 3 : 1);
  if (!first) return out;
  const same = (k: string) => k.startsWith(first);
  return out.filter(([k, , d]) => same(k) || (max >= 2 && d <= 1)).map(([k, t, d]) => [k, t, same(k) ? d : d + 1]);
}

/**
 * MiniSearch's radix tree (a Map per node, edge label → child, "" → the value) over keys
 * in sorted order, built in one pass: SearchableMap.set() scans each node's children in
 * turn, which for 400,000 keys takes minutes.
 */
export function radixTree(keys: string[]): Map<string, unknown> {
  const build = (lo: number, hi: number, depth: number): Map<string, unknown> => {
    const node = new Map<string, unknown>();
    let i = lo;
    if (keys[i]!.length === depth) node.set("", i++);
    while (i < hi) {
      const c = keys[i]![depth];
      let j = i + 1;
      while (j < hi && keys[j]![depth] === c) j++;
      const first = keys[i]!;
      const lastKey = keys[j - 1]!;
      let end = depth + 1;
      while (end < first.length && end < lastKey.length && first[end] === lastKey[end]) end++;
      node.set(first.slice(depth, end), build(i, j, end));
      i = j;
    }
    return node;
  };
  return keys.length ? build(0, keys.length, 0) : new Map();
}
