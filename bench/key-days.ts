/**
 * bun bench/key-days.ts [--calls N] [--rounds R]
 *
 * What counting each key's requests by UTC day (D71) adds to a keyed request in the file store:
 * UsageLedger.touch, which now also bumps the key's count for the day, against what touch did
 * before (its last-use Map.set and its change mark, on a second ledger), measured in the same
 * run, round after round; medians of
 * nanoseconds a call. In process, no HTTP, no file written (the ledger is not started).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { UsageLedger, usagePath } from "../src/access/usage";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    calls: { type: "string", default: "2000000" },
    rounds: { type: "string", default: "7" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write("Usage: bun bench/key-days.ts [--calls N (default 2000000)] [--rounds R (default 7)]\n");
  process.exit(0);
}
const calls = Number(values.calls);
const ledger = new UsageLedger(usagePath(mkdtempSync(join(tmpdir(), "tome-key-days-"))));
/** touch as it was before D71: the same two steps, through the ledger's own private members. */
const old = new UsageLedger(usagePath(mkdtempSync(join(tmpdir(), "tome-key-days-")))) as unknown as {
  lastUsed: Map<string, number>;
  changed(): void;
};
const keys = Array.from({ length: 64 }, (_, i) => `key_${String(i).padStart(12, "0")}`);
const now = Date.now();

const time = (run: (i: number) => void) => {
  const started = performance.now();
  for (let i = 0; i < calls; i++) run(i);
  return ((performance.now() - started) * 1e6) / calls;
};
const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
const baseline: number[] = [];
const counted: number[] = [];
for (let r = 0; r < Number(values.rounds); r++) {
  baseline.push(
    time((i) => {
      old.lastUsed.set(keys[i & 63]!, now + i);
      old.changed();
    }),
  );
  counted.push(time((i) => ledger.touch(keys[i & 63]!, now + i)));
}
const [b, c] = [median(baseline), median(counted)];
console.log(
  `touch before D71: ${b.toFixed(1)} ns a request; with the day's count: ${c.toFixed(1)} ns (+${(c - b).toFixed(1)} ns, ×${(c / b).toFixed(2)}); medians of ${values.rounds} rounds of ${calls} calls`,
);
