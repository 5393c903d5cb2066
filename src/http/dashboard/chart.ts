/**
 * The usage chart: credits spent each UTC day of the month, as an SVG the server writes (no
 * script, nothing fetched). Its colours come from the stylesheet (classes), its numbers from
 * each bar's title and from the table beside it, for readers that cannot see it.
 */
import { html, type Html } from "./html";

export interface DayUse {
  /** Day of the month, from 1. */
  day: number;
  requests: number;
  credits: number;
}

const WIDTH = 720;
const HEIGHT = 220;
const PLOT = { left: 48, right: 12, top: 14, bottom: 30 };

/**
 * A round top for the axis at or above n, whose half is a whole number too (the axis reads top,
 * half and 0 credits): an even number up to 10 (at least 2: an empty month reads 0, 1, 2), then
 * the smallest of 1, 2, 5 × 10^k.
 */
function axisTop(n: number): number {
  if (n <= 10) return Math.max(2, 2 * Math.ceil(n / 2));
  const p = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= n)!;
}

/** One month's days (days.length of them); today, 1-based (days after it have not come yet). */
export function usageChart(days: DayUse[], today: number, monthName: string): Html {
  const top = axisTop(Math.max(0, ...days.map((d) => d.credits)));
  const plotW = WIDTH - PLOT.left - PLOT.right;
  const plotH = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotW / days.length;
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PLOT.top + plotH - (v / top) * plotH;
  const total = days.reduce((a, d) => a + d.credits, 0);
  const grid = [0, top / 2, top].map(
    (
      v,
    ) => html`<line class="grid" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/>
<text class="axis" x="${PLOT.left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v.toLocaleString("en-US")}</text>`,
  );
  const bars = days.map((d) => {
    const x = PLOT.left + (d.day - 1) * slot + (slot - barW) / 2;
    const h = Math.max(d.credits > 0 ? 2 : 0, (d.credits / top) * plotH);
    const label = `${monthName} ${d.day}: ${d.credits.toLocaleString("en-US")} credits, ${d.requests.toLocaleString("en-US")} requests`;
    const kind = d.day > today ? "bar future" : d.day === today ? "bar today" : "bar";
    return html`<g><title>${label}</title><rect class="hit" x="${(PLOT.left + (d.day - 1) * slot).toFixed(1)}" y="${PLOT.top}" width="${slot.toFixed(1)}" height="${plotH}"/><rect class="${kind}" x="${x.toFixed(1)}" y="${(PLOT.top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" rx="1.5"/></g>`;
  });
  // Day 1, every fifth day and the month's last; a fifth day fewer than 3 days before the last is left out (the 30th of
  // a 31-day month): on a phone, where the labels are drawn larger, the two were drawn over each other ("3031").
  const last = days.length;
  const ticks = days
    .filter((d) => d.day === 1 || d.day === last || (d.day % 5 === 0 && last - d.day >= 3))
    .map(
      (d) =>
        html`<text class="axis" x="${(PLOT.left + (d.day - 0.5) * slot).toFixed(1)}" y="${HEIGHT - 10}" text-anchor="middle">${d.day}</text>`,
    );
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">
<title id="chart-title">Credits spent each day of ${monthName}</title>
<desc id="chart-desc">${total.toLocaleString("en-US")} credits in all this month; the table below the chart lists each day.</desc>
${grid}${bars}${ticks}
</svg>`;
}
