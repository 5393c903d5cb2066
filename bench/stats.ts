/** The summary statistics the benchmarks report. */

/** The q-quantile, interpolated between neighbours (q = 0.5: the median). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (at - lo);
}

/** The median: the middle value, or the mean of the two middle ones. */
export const median = (xs: number[]): number => quantile(xs, 0.5);
