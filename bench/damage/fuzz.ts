/**
 * bun bench/damage/fuzz.ts <snapshot> [--seed 7] [--section pages.] [--heavy]
 *
 * Damages one section of a copy of the snapshot at a time (4 and 64 random bytes; one 32-bit value set to 2^32−1,
 * 2^31−1, 0, +1, half or a random number), then opens the copy as a library in a child process (reader.ts) that
 * searches, reads every page and its chunks, and lists changes, within 20 s (--heavy: every title searched too,
 * 40 s). Prints a line a copy: the section, the damage, and what came of it: "silent" (answered, perhaps wrongly),
 * "refused" (SnapshotErrors only), "BAD" (another error: its first ones), or "EXIT" (a hang or a crash). D119.
 * Slow (a second or more a copy): not part of the tests.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openContainer } from "../../src/snapshot";
import { tempDir } from "../temp-dirs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seed: { type: "string", default: "7" },
    section: { type: "string" },
    heavy: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
const USAGE = "Usage: bun bench/damage/fuzz.ts <snapshot> [--seed 7] [--section pages.] [--heavy]   (D119)";
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const source = positionals[0];
if (!source) {
  console.error(USAGE);
  process.exit(2);
}
const whole = readFileSync(source);
let seed = Number(values.seed);
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const valued: Record<string, (v: number) => number> = {
  max: () => 0xffffffff,
  big: () => 0x7fffffff,
  zero: () => 0,
  plus: (v) => (v + 1) >>> 0,
  half: (v) => v >>> 1,
  random: () => Math.floor(random() * 2 ** 32),
};
const copy = join(tempDir(), "damaged.tome");
const limit = values.heavy ? "40" : "20";
for (const s of openContainer(source).sections) {
  if (values.section && !s.name.startsWith(values.section)) continue;
  for (const damage of ["bytes 4", "bytes 64", ...Object.keys(valued)]) {
    const bytes = Buffer.from(whole);
    const words = Math.floor(s.length / 4);
    const at = s.offset + 4 * Math.floor(random() * words);
    if (damage.startsWith("bytes")) {
      for (let i = Number(damage.slice(6)); i > 0; i--)
        bytes[s.offset + Math.floor(random() * s.length)] = random() * 256;
    } else if (words) bytes.writeUInt32LE(valued[damage]!(bytes.readUInt32LE(at)), at);
    else continue;
    writeFileSync(copy, bytes);
    const started = performance.now();
    const child = Bun.spawnSync([
      "timeout",
      limit,
      "bun",
      join(import.meta.dir, "reader.ts"),
      copy,
      ...(values.heavy ? ["--heavy"] : []),
    ]);
    const ms = Math.round(performance.now() - started);
    const out = child.stdout.toString().trim();
    const errors: string[] = out.startsWith("[") ? JSON.parse(out) : [];
    const bad = errors.filter((e) => !e.includes("SnapshotError"));
    const came = child.exitCode ? `EXIT ${child.exitCode}` : bad.length ? "BAD" : errors.length ? "refused" : "silent";
    const said = JSON.stringify((bad.length ? bad : errors).slice(0, 2));
    console.log(
      [s.name, damage, came, `${ms} ms`, child.exitCode ? child.stderr.toString().slice(-200) : said].join("\t"),
    );
  }
}
rmSync(copy, { force: true });
