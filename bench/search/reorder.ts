/**
 * bun bench/search/reorder.ts <snapshot.tome> --out OUT.tome
 *
 * A copy of a snapshot whose page orders (D51, D124) are made again by this checkout, every
 * other section copied byte for byte: to measure a change of the stored orders at 1M or 5M
 * chunks without building the corpus again (about 25 minutes at 5M). Prints how long the
 * orders took and the section's size before and after.
 */
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/search/reorder.ts <snapshot.tome> --out OUT.tome
  --out OUT   the copy to write (not the snapshot itself)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { out: { type: "string" }, help: { type: "boolean", short: "h" } },
  allowPositionals: true,
});
if (values.help || !positionals[0] || !values.out || values.out === positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { ContainerWriter, openContainer } = await import("../../src/snapshot");
const { pageOrderSection } = await import("../../src/search");
const { ORDERS_SECTION: ORDERS } = await import("../../src/search/ranking/page-orders");

const from = openContainer(positionals[0]);
const out = new ContainerWriter(values.out);
const SLICE = 64 << 20;
for (const { name } of from.sections) {
  if (name === ORDERS) continue;
  const bytes = from.section(name);
  out.begin(name);
  for (let at = 0; at < bytes.byteLength; at += SLICE) out.write(bytes.subarray(at, at + SLICE));
  out.end();
}
const sealed = out.seal(from.meta);
const started = performance.now();
const orders = pageOrderSection(sealed, (stage, done, total) => {
  if (done === total || done % 4096 === 0) process.stderr.write(`\r${stage}: ${done} / ${total}`);
});
const seconds = (performance.now() - started) / 1000;
out.section(orders.name, orders.bytes);
out.finish(from.meta);
const before = from.has(ORDERS) ? from.section(ORDERS).byteLength : 0;
console.log(
  `\n${values.out}: orders made in ${seconds.toFixed(1)} s, ${(before / 1e6).toFixed(1)} MB before, ${(orders.bytes.byteLength / 1e6).toFixed(1)} MB now`,
);
