/**
 * bun bench/damage/open-cost.ts <snapshot> [runs]: what D119's checks add to open(): the page table and text store
 * made with their checks (the first pass maps the columns in), and the checks alone again; then a search worker's
 * open (openUnguarded, every section mapped, in a thread of its own, as the pool's) checking the file again, and
 * handed the identity the request thread checked it as, which skips the pass: what each worker saves at a start and
 * at each swap. Medians in ms.
 */
import { openContainer, openSnapshot, PageTable, type SnapshotMeta, TextStore } from "../../src/snapshot";
import { median } from "../stats";

declare const self: Worker;

const USAGE =
  "Usage: bun bench/damage/open-cost.ts <snapshot> [runs]   (what D119's checks add to open(), and what a search worker's open saves by not running them again, ms)";

/**
 * A search worker's open of the snapshot's tables (openUnguarded's openSnapshot: its indexes are read the same either
 * way), timed in the worker after one open to warm the code: the pass run, or skipped when handed the identity checked.
 */
function workerOpen(path: string, identity: string | undefined): number {
  openSnapshot(path, identity).container.letGo();
  const t = performance.now();
  const snapshot = openSnapshot(path, identity);
  snapshot.container.mapAll();
  const ms = performance.now() - t;
  snapshot.container.letGo();
  return ms;
}

async function main(): Promise<void> {
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
  const checked = openSnapshot(path).checked;
  // A new thread each time, as the pool's workers (their mappings of the file their own), the two ways in turn.
  const opened = async (identity: string | undefined) => {
    const worker = new Worker(import.meta.url);
    const ms = await new Promise<number>((told) => {
      worker.onmessage = (e: MessageEvent<number>) => told(e.data);
      worker.postMessage({ path, identity });
    });
    worker.terminate();
    return ms;
  };
  const checking: number[] = [];
  const skipping: number[] = [];
  for (let r = 0; r < Number(runs); r++) {
    checking.push(await opened(undefined));
    skipping.push(await opened(checked));
  }
  const [check, skip] = [median(checking), median(skipping)];
  console.log(
    `${path}: a worker's open of the tables checking again ${check.toFixed(2)} ms, handed the identity checked ${skip.toFixed(2)} ms: ${(check - skip).toFixed(2)} ms saved a worker, at a start and each swap`,
  );
}

if (Bun.isMainThread) await main();
else
  self.onmessage = (e: MessageEvent<{ path: string; identity: string | undefined }>) =>
    self.postMessage(workerOpen(e.data.path, e.data.identity));
