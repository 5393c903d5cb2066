/**
 * bun bench/search/huge-pages.ts <snapshot.tome> [--class K] [--queries N] [--sections RE] [--same]
 *
 * Whether a first run is slow for the TLB (issue 59): the snapshot opened twice in one process, once mapped as the
 * server maps it (4 KB pages) and once with its sections copied into anonymous memory that asks for transparent huge
 * pages (madvise MADV_HUGEPAGE: 2 MB pages, 512 times fewer TLB entries), then each query's first run timed on both
 * (CPU ms), in alternating order query by query (pairing.ts). Prints each side's p50 / p99 and the median of the per-query ratio copied ÷ mapped. --sections copies
 * only the sections whose names match RE (the others mapped); --same copies nothing (both sides mapped: the
 * ratio's spread with no difference). The copy is made here, by replacing FileMapping.map: nothing in src does it.
 */
import { dlopen, FFIType, type Pointer, toArrayBuffer } from "bun:ffi";
import { readSync } from "node:fs";
import { parseArgs } from "node:util";
import { median, quantile } from "../stats";

const USAGE = `Usage: bun bench/search/huge-pages.ts <snapshot.tome> [--class K] [--queries N] [--sections RE] [--same]
  --class K        the benchmark mix's class (default typo)
  --queries N      queries (default 300)
  --sections RE    copy only the sections whose names match RE
  --same           copy nothing: both sides mapped (the spread of the ratio with no difference)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string", default: "typo" },
    queries: { type: "string", default: "300" },
    sections: { type: "string" },
    same: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const { open } = await import("../../src/search");
const { FileMapping } = await import("../../src/snapshot/mapping");
const { mixClass, queryMix } = await import("../queries");
const { pairFirstRuns, warmBoth } = await import("./pairing");

const PROT_READ_WRITE = 3;
const MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
const MADV_HUGEPAGE = 14;
const libc = dlopen("libc.so.6", {
  mmap: {
    args: [FFIType.u64, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64],
    returns: FFIType.i64_fast,
  },
  madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
}).symbols;

const file = positionals[0];
const mapped = open(file);
mapped.snapshot.container.mapAll();
const mix = queryMix(mapped.snapshot);
if (!(values.class in mix)) {
  console.error(`no class "${values.class}"; the classes are: ${Object.keys(mix).join(", ")}`);
  process.exit(2);
}

// The second engine's sections: copied into huge-page memory as the container maps them (never unmapped: the process ends).
const sectionsMatching = values.sections ? new RegExp(values.sections) : undefined;
const names = new Map(mapped.snapshot.container.sections.map((s) => [`${s.offset}:${s.length}`, s.name]));
const mapFile = FileMapping.prototype.map;
let copied = 0;
if (!values.same)
  FileMapping.prototype.map = function (this: { fd: number }, offset: number, length: number) {
    const name = names.get(`${offset}:${length}`) ?? "";
    if (sectionsMatching && !sectionsMatching.test(name)) return mapFile.call(this as never, offset, length);
    const address = Number(libc.mmap(0, length, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0));
    if (address === -1) throw new Error(`could not map ${length} bytes of anonymous memory`);
    libc.madvise(address, length, MADV_HUGEPAGE);
    const bytes = new Uint8Array(toArrayBuffer(address as unknown as Pointer, 0, length));
    const fd = this.fd;
    for (let at = 0; at < length; ) {
      const read = readSync(fd, bytes, at, Math.min(length - at, 1 << 26), offset + at);
      if (read <= 0) throw new Error(`${file} ends before its section ${name}`);
      at += read;
    }
    copied += length;
    return bytes;
  };
const copy = open(file);
copy.snapshot.container.mapAll();
FileMapping.prototype.map = mapFile;
const huge = /AnonHugePages:\s+(\d+)/.exec(await Bun.file("/proc/self/smaps_rollup").text())?.[1];
console.error(
  `copied ${(copied / 2 ** 20).toFixed(0)} MiB of sections; anonymous huge pages in the process: ${(Number(huge) / 1024).toFixed(0)} MiB`,
);

const queries = Array.from({ length: Number(values.queries) }, mixClass(mix, values.class)).filter((q) => q.trim());
warmBoth(mapped, copy, 1000);
const { onA: onMapped, onB: onCopy, ratios } = pairFirstRuns(mapped, copy, queries);
const ms = (v: number[]) => `${quantile(v, 0.5).toFixed(2)} / ${quantile(v, 0.99).toFixed(2)}`;
console.log(
  `${values.class}, ${queries.length} first runs (CPU ms p50 / p99): mapped ${ms(onMapped)} | ${values.same ? "mapped again" : "copied, huge pages"} ${ms(onCopy)} | ratio ÷ mapped, median of the queries' ${median(ratios).toFixed(3)}`,
);
