/**
 * The first i in [0, n) with values[at + i] ≥ wanted (n when none), values ascending there:
 * from hint forward by galloping when wanted lies past it, else by bisection below it. Asked
 * in ascending order, each answer is found in steps logarithmic in its distance from the last.
 */
export function firstAtLeast(values: Uint32Array, at: number, n: number, hint: number, wanted: number): number {
  let lo = 0;
  let hi = n;
  if (hint < n && values[at + hint]! < wanted) {
    lo = hint + 1;
    for (let step = 1; ; step *= 2) {
      const probe = lo + step - 1;
      if (probe >= n) break;
      if (values[at + probe]! >= wanted) {
        hi = probe;
        break;
      }
      lo = probe + 1;
    }
  } else if (hint < n) {
    if (hint === 0 || values[at + hint - 1]! < wanted) return hint;
    hi = hint;
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[at + mid]! < wanted) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
