/** A progress bar on a terminal; nothing when output goes to a file or a pipe. */
import { SingleBar } from "cli-progress";
import type { IngestProgress } from "../ingest";

interface IngestProgressDisplay {
  update(p: IngestProgress): void;
  stop(): void;
}

const mb = (n: number) => (n / 1e6).toFixed(1);

/**
 * Every bar of Tome's scripts: this format, the same width, left on screen when done. A bar still shown when the
 * process exits (a build command stopped by SIGINT exits under it) is stopped then: its line ended and the cursor it hid shown
 * again, not left hidden in the shell that ran the command.
 */
function terminalBar(stream: NodeJS.WriteStream, format: string): SingleBar {
  const bar = new SingleBar({ stream, format, barsize: 24, hideCursor: true, clearOnComplete: false });
  const atExit = () => bar.stop();
  // First among the exit listeners: what the command says of its stop comes on a line of its own, after the bar's.
  bar.on("start", () => process.prependOnceListener("exit", atExit));
  bar.on("stop", () => process.off("exit", atExit));
  return bar;
}

/** A duration for a reader: "45 s", "12 min", "3 h 05 min". */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** The time left at the rate so far: `done` of `total` in `seconds`; "?" until there is a rate or when the total is unknown. */
export function eta(done: number, total: number | undefined, seconds: number): string {
  if (!total || done <= 0 || seconds <= 0) return "?";
  return duration(((total - done) * seconds) / done);
}

const count = (n: number) => n.toLocaleString("en-US");

/** The figures of a dump being read, as a line (off a terminal) and a bar's payload share them. */
export function readingFigures(p: IngestProgress, seconds: number) {
  return {
    dump: `[${p.dumpIndex + 1}/${p.dumpCount}] ${p.dump.split("/").pop()}`,
    read: mb(p.bytesRead),
    size: p.totalBytes ? mb(p.totalBytes) : "?",
    articles: count(p.articles),
    redirects: count(p.redirects),
    rate: count(Math.round(p.articles / Math.max(seconds, 0.001))),
    left: eta(p.bytesRead, p.totalBytes, seconds),
  };
}

/** What a dump's reading says off a terminal, a line at a time. */
export function readingLine(p: IngestProgress, seconds: number): string {
  const f = readingFigures(p, seconds);
  const share = p.totalBytes ? ` (${Math.floor((p.bytesRead / p.totalBytes) * 100)}%)` : "";
  return `reading ${f.dump}: ${f.read} of ${f.size} MB${share}, ${f.articles} articles, ${f.redirects} redirects, ${f.rate} articles/s, ${f.left} left\n`;
}

/**
 * Off a terminal, a line a minute at most, the first a minute in: a long build's log says how far
 * it is, a short one's says nothing (its report is on stdout).
 */
const LINE_EVERY_MS = 60_000;

function everyMinute(): () => boolean {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < LINE_EVERY_MS) return false;
    last = now;
    return true;
  };
}

/**
 * The reading of the dumps: on a terminal a bar per dump (MB read, articles, articles a second,
 * the time left at the rate so far); off one, the same figures as a line a minute.
 */
function ingestProgress(stream: NodeJS.WriteStream = process.stderr): IngestProgressDisplay {
  let current = "";
  let started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  /** Whether p is of a dump not seen before (its time starts now). */
  const turn = (p: IngestProgress) => {
    const label = `${p.dumpIndex}:${p.dump}`;
    if (label === current) return false;
    current = label;
    started = performance.now();
    return true;
  };
  if (!stream.isTTY) {
    const due = everyMinute();
    return {
      update(p) {
        turn(p);
        if (due()) stream.write(readingLine(p, seconds()));
      },
      stop() {},
    };
  }
  const bar = terminalBar(
    stream,
    " {dump} |{bar}| {percentage}% | {read}/{size} MB | {articles} articles, {redirects} redirects | {rate} articles/s | {left} left",
  );
  let active = false;
  return {
    update(p) {
      const total = p.totalBytes ?? Math.max(p.bytesRead, 1);
      const fresh = turn(p);
      const payload = readingFigures(p, seconds());
      if (!active || fresh) {
        if (active) bar.stop();
        bar.start(total, p.bytesRead, payload);
        active = true;
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

interface IndexProgressDisplay {
  update(stage: string, done: number, total: number): void;
  stop(): void;
}

/**
 * The search index's stages after the reading: on a terminal a bar per stage with its rate and
 * time left; off one, the same figures as a line a minute.
 */
function indexProgress(stream: NodeJS.WriteStream = process.stderr): IndexProgressDisplay {
  let current = "";
  let started = performance.now();
  const figures = (done: number, total: number) => {
    const seconds = (performance.now() - started) / 1000;
    return { rate: count(Math.round(done / Math.max(seconds, 0.001))), left: eta(done, total, seconds) };
  };
  if (!stream.isTTY) {
    const due = everyMinute();
    return {
      update(stage, done, total) {
        if (stage !== current) {
          current = stage;
          started = performance.now();
        }
        if (!due()) return;
        const f = figures(done, total);
        const share = total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : "";
        // The stage as its bar names it: the base's check of an update is no index stage ('index checking …' was said).
        stream.write(`${stage}: ${count(done)} of ${count(total)}${share}, ${f.rate} a second, ${f.left} left\n`);
      },
      stop() {},
    };
  }
  const bar = terminalBar(stream, " {shard} |{bar}| {value}/{total} | {rate}/s | {left} left");
  return {
    update(shard, done, total) {
      if (shard !== current) {
        if (current) bar.stop();
        started = performance.now();
        bar.start(total, done, { shard, ...figures(done, total) });
        current = shard;
      } else {
        bar.setTotal(total);
        bar.update(done, figures(done, total));
      }
    },
    stop() {
      if (current) bar.stop();
      current = "";
    },
  };
}

/** A build's progress: the reading of the dumps, then the index's stages, whose bars take over from the reading's. */
export interface BuildProgressDisplay {
  /** The reading's progress (ingest's onProgress). */
  reading(p: IngestProgress): void;
  /** An index stage's progress (the build's progress): the reading's bar, if still shown, gives way. */
  stage(stage: string, done: number, total: number): void;
  stop(): void;
}

export function buildProgress(stream: NodeJS.WriteStream = process.stderr): BuildProgressDisplay {
  const reading = ingestProgress(stream);
  const stages = indexProgress(stream);
  return {
    // The base's check of an update comes before the reading: its bar gives way too.
    reading: (p) => {
      stages.stop();
      reading.update(p);
    },
    stage(stage, done, total) {
      reading.stop();
      stages.update(stage, done, total);
    },
    stop() {
      reading.stop();
      stages.stop();
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
