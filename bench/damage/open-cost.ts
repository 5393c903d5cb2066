/**
 * bun bench/damage/open-cost.ts <snapshot> [runs]: what D119's checks add to open(): the page table and text store
 * made with their checks (the first pass maps the columns in), and the checks alone again, medians in ms.
 */
import { openContainer, PageTable, type SnapshotMeta, TextStore } from "../../src/snapshot";
import { median } from "../stats";

const USAGE = "Usage: bun bench/damage/open-cost.ts <snapshot> [runs]   (what D119's checks add to open(), ms)";
const [path, runs = "7"] = process.argv.slice(2);
if (path === "--help" || path === "-h") {
  console.log(USAGE);
  process.exit(0);
}
if (!path) {
  console.error(USAGE);
  process.exit(2);
}
const made: number[] = [];
const again: number[] = [];
for (let r = 0; r < Number(runs); r++) {
  const container = openContainer(path);
  let t = performance.now();
  const text = new TextStore(container);
  const pages = new PageTable(container, text);
  made.push(performance.now() - t);
  t = performance.now();
  (text as unknown as { fault(): void }).fault();
  (pages as unknown as { fault(m: SnapshotMeta, n: number): void }).fault(
    container.meta as SnapshotMeta,
    text.chunkCount,
  );
  again.push(performance.now() - t);
  container.letGo();
}
console.log(
  `${path}: made with the checks ${median(made).toFixed(2)} ms, the checks alone again ${median(again).toFixed(2)} ms`,
);
