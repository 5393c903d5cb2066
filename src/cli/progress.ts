/** A progress bar on a terminal; nothing when output goes to a file or a pipe. */
import { SingleBar } from "cli-progress";
import type { IngestProgress } from "../ingest";

export interface IngestProgressDisplay {
  update(p: IngestProgress): void;
  stop(): void;
}

const mb = (n: number) => (n / 1e6).toFixed(1);

export function ingestProgress(stream: NodeJS.WriteStream = process.stderr): IngestProgressDisplay {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = new SingleBar({
    stream,
    format: " {dump} |{bar}| {percentage}% | {read}/{size} MB | {articles} articles, {redirects} redirects | {rate} articles/s",
    barsize: 24,
    hideCursor: true,
    clearOnComplete: false,
  });
  const started = performance.now();
  let current = "";
  let active = false;
  return {
    update(p) {
      const label = `[${p.dumpIndex + 1}/${p.dumpCount}] ${p.dump.split("/").pop()}`;
      const total = p.totalBytes ?? Math.max(p.bytesRead, 1);
      const payload = {
        dump: label,
        read: mb(p.bytesRead),
        size: p.totalBytes ? mb(p.totalBytes) : "?",
        articles: p.articles,
        redirects: p.redirects,
        rate: Math.round(p.articles / Math.max((performance.now() - started) / 1000, 0.001)),
      };
      if (!active || label !== current) {
        if (active) bar.stop();
        bar.start(total, p.bytesRead, payload);
        active = true;
        current = label;
      } else {
        bar.setTotal(total);
        bar.update(p.bytesRead, payload);
      }
    },
    stop() {
      if (active) bar.stop();
      active = false;
    },
  };
}
