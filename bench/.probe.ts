import { open } from "../src/search";
import { queryMix } from "./queries";
import { heapStats } from "bun:jsc";
const anon = () => (Number(/RssAnon:\s+(\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))![1]) / 1024) | 0;
const tome = open(process.argv[2]!);
const mix = Object.entries(queryMix(tome.snapshot));
const mb = (x: number) => (x / 1e6) | 0;
const report = (label: string) => {
  const m = process.memoryUsage();
  const h = heapStats();
  console.log(
    label,
    "anon",
    anon(),
    "heapUsed",
    mb(m.heapUsed),
    "heapTotal",
    mb(m.heapTotal),
    "external",
    mb(m.external),
    "arrayBuffers",
    mb(m.arrayBuffers),
    "extraMemory",
    mb(h.extraMemorySize),
    "objects",
    h.objectCount,
  );
};
report("open");
const only = process.argv[3];
for (let i = 0; i < 1000; i++) {
  const [kind, make] = mix[i % mix.length]!;
  if (only && kind !== only) continue;
  tome.search(make());
}
report("after");
Bun.gc(true);
report("gc");
