/** A progress bar on a terminal; nothing when output goes to a file or a pipe. */
import { SingleBar } from "cli-progress";
import type { IngestProgress } from "../ingest";

export interface IngestProgressDisplay {
  update(p: IngestProgress): void;
  stop(): void;
}

const mb = (n: number) => (n / 1e6).toFixed(1);

/** Every bar of Tome's scripts: this format, the same width, left on screen when done. */
function terminalBar(stream: NodeJS.WriteStream, format: string): SingleBar {
  return new SingleBar({ stream, format, barsize: 24, hideCursor: true, clearOnComplete: false });
}

export function ingestProgress(stream: NodeJS.WriteStream = process.stderr): IngestProgressDisplay {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = terminalBar(
    stream,
    " {dump} |{bar}| {percentage}% | {read}/{size} MB | {articles} articles, {redirects} redirects | {rate} articles/s",
  );
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

export interface IndexProgressDisplay {
  update(stage: string, done: number, total: number): void;
  stop(): void;
}

/** A bar per shard while the search indexes are built. */
export function indexProgress(stream: NodeJS.WriteStream = process.stderr): IndexProgressDisplay {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = terminalBar(stream, " {shard} |{bar}| {value}/{total}");
  let current = "";
  return {
    update(shard, done, total) {
      if (shard !== current) {
        if (current) bar.stop();
        bar.start(total, done, { shard });
        current = shard;
      } else bar.update(done);
    },
    stop() {
      if (current) bar.stop();
      current = "";
    },
  };
}

export interface DownloadProgressDisplay {
  update(received: number, total: number | undefined): void;
  stop(): void;
}

/** A bar while a dump downloads; off a terminal, a line at every tenth (or every 100 MB when the size is unknown). */
export function downloadProgress(name: string, stream: NodeJS.WriteStream = process.stderr): DownloadProgressDisplay {
  const started = performance.now();
  let from: number | undefined;
  const rate = (received: number) =>
    mb((received - (from ?? received)) / Math.max((performance.now() - started) / 1000, 0.001));
  if (!stream.isTTY) {
    let said = -1;
    return {
      update(received, total) {
        from ??= received;
        const step = total ? Math.floor((received / total) * 10) : Math.floor(received / 1e8);
        if (step === said) return;
        said = step;
        stream.write(
          `download ${name}: ${mb(received)}${total ? ` of ${mb(total)} MB (${step * 10}%)` : " MB"}, ${rate(received)} MB/s\n`,
        );
      },
      stop() {},
    };
  }
  const bar = terminalBar(stream, ` ${name} |{bar}| {percentage}% | {got}/{size} MB | {rate} MB/s`);
  let active = false;
  return {
    update(received, total) {
      from ??= received;
      const payload = { got: mb(received), size: total ? mb(total) : "?", rate: rate(received) };
      if (!active) {
        bar.start(total ?? Math.max(received, 1), received, payload);
        active = true;
      } else {
        bar.setTotal(total ?? Math.max(received, 1));
        bar.update(received, payload);
      }
    },
    stop() {
      if (active) bar.stop();
      active = false;
    },
  };
}

export interface CountProgressDisplay {
  update(done: number): void;
  stop(): void;
}

/** A bar over a known count of things (`unit`, e.g. chunks), with their rate; nothing off a terminal. */
export function countProgress(
  label: string,
  total: number,
  unit: string,
  stream: NodeJS.WriteStream = process.stderr,
): CountProgressDisplay {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = terminalBar(stream, ` ${label} |{bar}| {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s`);
  const started = performance.now();
  const rate = (done: number) => Math.round(done / Math.max((performance.now() - started) / 1000, 0.001));
  bar.start(total, 0, { rate: 0 });
  return {
    update: (done) => bar.update(done, { rate: rate(done) }),
    stop: () => bar.stop(),
  };
}
