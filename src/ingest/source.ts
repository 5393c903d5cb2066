/**
 * Opens a dump (local path or http(s) URL) as a stream of decompressed XML bytes.
 * Compression is recognised by magic bytes, not by file name, and decoded by the
 * system's bzip2 (lbzip2 or pbzip2 when installed), xz or gzip in a separate process (so it
 * runs on cores of its own), read ahead of the XML parser.
 */
import { accessSync, constants, type Stats, statSync } from "node:fs";
import { DumpError } from "./errors";
import { beginsAsSnapshot, cannotRead } from "../files";
import { printableName } from "../printable";

type Compression = "bzip2" | "xz" | "gzip" | "none";

export interface DumpSource {
  /** What the user passed. */
  readonly spec: string;
  readonly compression: Compression;
  /** Size of the compressed input, when known (files, or HTTP with Content-Length). */
  readonly totalBytes: number | undefined;
  /** Compressed bytes consumed so far, for progress. */
  bytesRead(): number;
  /** Decompressed XML. */
  readonly xml: ReadableStream<Uint8Array>;
  /** Resolves when the decoder has exited cleanly; rejects with a DumpError naming the damage otherwise. */
  finished(): Promise<void>;
  /**
   * After the XML ended badly: the decoder's own complaint if it failed (waiting briefly
   * for it to exit), else null. The decoder is stopped either way.
   */
  decoderError(): Promise<DumpError | null>;
  /** Stops reading and kills the decoder. */
  cancel(): void;
}

const DECODER_GRACE_MS = 2000;

/**
 * Each compression's decoders, the first installed wins: a parallel bzip2 when there is one (a
 * single bzip2 decodes about 23 MB of XML a second, what about 8 parsing cores read), xz on every core.
 * A parallel decoder decodes blocks ahead and fails before writing them: of a damaged dump it
 * gives fewer of the pages before the damage than bzip2 does, so a read that keeps the damaged
 * dump's pages (--allow-truncated) takes the last, serial decoder (D111).
 */
const DECODERS: Record<Exclude<Compression, "none">, string[][]> = {
  bzip2: [
    ["lbzip2", "-dc"],
    ["pbzip2", "-dc"],
    ["bzip2", "-dc"],
  ],
  xz: [["xz", "-dc", "-T0"]],
  gzip: [["gzip", "-dc"]],
};

/**
 * The command that decodes a compression here: the first of its decoders installed, else the
 * last (whose absence is reported); `serial`: the last.
 */
export function decoderFor(compression: Exclude<Compression, "none">, serial = false): string[] {
  const choices = DECODERS[compression];
  const last = choices[choices.length - 1]!;
  return serial ? last : (choices.find(([command]) => Bun.which(command!) !== null) ?? last);
}

/**
 * Decoded XML held ahead of the reader, so that the decoder keeps working while the parsing
 * workers hold the reading back (a pipe holds 64 KB).
 */
const READ_AHEAD_BYTES = 8 << 20;

function detectCompression(head: Uint8Array): Compression {
  const b = head;
  if (b[0] === 0x42 && b[1] === 0x5a && b[2] === 0x68) return "bzip2";
  if (b[0] === 0xfd && b[1] === 0x37 && b[2] === 0x7a && b[3] === 0x58 && b[4] === 0x5a && b[5] === 0x00) return "xz";
  if (b[0] === 0x1f && b[1] === 0x8b) return "gzip";
  return "none";
}

function isUrl(spec: string): boolean {
  return /^https?:\/\//i.test(spec);
}

/**
 * fetch's complaint as said to a user: Bun's advice to its own programmer goes ("For more information, pass
 * `verbose: true` … to fetch()"), and so does a closing '.', for the sentence it is put in to end as it needs.
 */
export function fetchFailureSaid(err: unknown): string {
  return (err as Error).message.replace(/\s*For more information, pass `verbose: true`.*$/s, "").replace(/\.$/, "");
}

/** A URL fetch could not reach, said; Bun's question keeps its own mark ("…access the url?." was said). */
export function cannotReachSaid(url: string, err: unknown): string {
  const why = fetchFailureSaid(err);
  return `cannot reach ${printableName(url)}: ${why}${/[?!]$/.test(why) ? "" : "."} Check the address and the network, or use a local dump file.`;
}

interface RawSource {
  stream: ReadableStream<Uint8Array>;
  size: number | undefined;
  broken?: () => DumpError | undefined;
  /** Lets go of the source (the download's connection). */
  abandon?: () => void;
}

async function openRaw(spec: string, signal: AbortSignal | undefined): Promise<RawSource> {
  if (isUrl(spec)) {
    let res: Response;
    // Not the signal itself: it would cut a download that still brings bytes, which is stopped at a safe point (D160).
    const connection = new AbortController();
    const cut = () => connection.abort(signal?.reason);
    // No answer yet is no byte coming: stopped, the wait is left at once (D176).
    signal?.addEventListener("abort", cut, { once: true });
    try {
      res = await fetch(spec, { redirect: "follow", signal: connection.signal });
    } catch (err) {
      signal?.throwIfAborted();
      throw new DumpError(cannotReachSaid(spec, err));
    } finally {
      signal?.removeEventListener("abort", cut);
    }
    if (!res.ok || !res.body) {
      throw new DumpError(
        `cannot download ${printableName(spec)}: HTTP ${res.status} ${res.statusText}. Check the address, or use a local dump file.`,
      );
    }
    const len = Number(res.headers.get("content-length"));
    return {
      ...brokenOffSaid(res.body, spec),
      size: Number.isFinite(len) && len > 0 ? len : undefined,
      abandon: cut,
    };
  }
  // Bun.file().exists() is false for a device (/dev/null was "dump not found"), whose stream() throws EPERM from epoll.
  let stat: Stats | undefined;
  const unreadable = (err: unknown) => new DumpError(cannotRead(`the dump ${printableName(spec)}`, err));
  try {
    stat = statSync(spec, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOTDIR") throw unreadable(err);
  }
  if (!stat)
    throw new DumpError(`dump not found: ${printableName(spec)}. Give an existing file or an http(s) URL.`, {
      missing: spec,
    });
  if (stat.isDirectory())
    throw new DumpError(`${printableName(spec)} is a folder, not a dump: name the dump file in it.`);
  if (!stat.isFile() && !stat.isFIFO())
    throw new DumpError(`${printableName(spec)} is a device, not a dump: give a dump file, a pipe or an http(s) URL.`);
  // Refused only at its first read, it was said to be a write refused: "this user may not write there: write elsewhere
  // (--out)". Asked, not opened: opening a FIFO waits for its writer.
  try {
    accessSync(spec, constants.R_OK);
  } catch (err) {
    throw unreadable(err);
  }
  const file = Bun.file(spec);
  return { stream: file.stream(), size: stat.isFile() ? stat.size : undefined };
}

/**
 * A download's body, whose break (the connection reset mid-way) is a damaged dump said as such: it was fetch's
 * TypeError, thrown out of the build with its stack. `broken`: that damage, for a decoder's complaint to give way to
 * (the input it was given ended: "Compressed file ends unexpectedly").
 */
function brokenOffSaid(
  body: ReadableStream<Uint8Array>,
  spec: string,
): { stream: ReadableStream<Uint8Array>; broken: () => DumpError | undefined } {
  const reader = body.getReader();
  let got = 0;
  let broken: DumpError | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const { done, value } = await reader.read();
        if (done) return ctl.close();
        got += value.byteLength;
        ctl.enqueue(value);
      } catch (err) {
        const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        broken = new DumpError(
          `the download of ${printableName(spec)} broke off after ${got.toLocaleString("en-US")} bytes (${why}): run the command again, or download the dump first and build from its file.`,
          { damaged: true },
        );
        ctl.error(broken);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { stream, broken: () => broken };
}

/** How long a read of a stopped build's dump may wait for its next bytes before it is abandoned (D176). */
const STALLED_MS = 1000;

/**
 * The source's bytes, whose read is abandoned when the signal is aborted and no bytes come for STALLED_MS (a FIFO no
 * one writes, a download that stopped sending): the build stopped would otherwise wait there for ever, never reaching
 * its next safe point (D160), and one SIGTERM (timeout(1), systemd, Docker) would never end it. Abandoned, the stream
 * fails with the signal's reason and `abandon` lets go of what it read from. A read that brings bytes is not cut.
 */
function abandonedWhenStalled(
  source: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  abandon: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const { promise: stalled, resolve } = Promise.withResolvers<null>();
      const watch = () => {
        timer = setTimeout(resolve, STALLED_MS, null);
      };
      if (signal.aborted) watch();
      else signal.addEventListener("abort", watch, { once: true });
      try {
        const got = await Promise.race([reader.read(), stalled]);
        if (got === null) {
          abandon();
          reader.cancel(signal.reason).catch(() => {});
          ctl.error(signal.reason);
        } else if (got.done) ctl.close();
        else ctl.enqueue(got.value);
      } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", watch);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Reads the first chunk of a stream and returns it with a stream that replays it. */
async function peek(
  stream: ReadableStream<Uint8Array>,
): Promise<{ head: Uint8Array; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const first = await reader.read();
  const head = first.done ? new Uint8Array(0) : first.value;
  const replay = new ReadableStream<Uint8Array>({
    start(ctl) {
      if (head.byteLength) ctl.enqueue(head);
    },
    async pull(ctl) {
      const { done, value } = await reader.read();
      if (done) ctl.close();
      else ctl.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { head, stream: replay };
}

/**
 * `serial`: decode with the serial decoder, which gives every page before a damage (decoderFor). `signal`: aborted, a
 * read waiting on the source is abandoned (abandonedWhenStalled, D176).
 */
export async function openDump(spec: string, serial = false, signal?: AbortSignal): Promise<DumpSource> {
  const raw = await openRaw(spec, signal);
  let decoder: Bun.Subprocess | undefined;
  const source = signal
    ? abandonedWhenStalled(raw.stream, signal, () => {
        raw.abandon?.();
        decoder?.kill();
      })
    : raw.stream;
  const { head, stream } = await peek(source);
  if (head.byteLength === 0) throw new DumpError(`${printableName(spec)} is empty: it holds no XML.`);
  // Was "not a MediaWiki XML export (disallowed character at line 1)": a snapshot given where its dump goes.
  if (beginsAsSnapshot(head))
    throw new DumpError(
      `${printableName(spec)} is a Tome snapshot, not a dump: give the MediaWiki dump it is to be built from, or apply dumps to it with snapshot:update --base ${printableName(spec)}.`,
    );
  const compression = detectCompression(head);

  let read = 0;
  const counted = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        read += chunk.byteLength;
        ctl.enqueue(chunk);
      },
    }),
  );

  if (compression === "none") {
    return {
      spec,
      compression,
      totalBytes: raw.size,
      bytesRead: () => read,
      xml: counted,
      finished: async () => {},
      decoderError: async () => null,
      cancel: () => void counted.cancel().catch(() => {}),
    };
  }

  const argv = decoderFor(compression, serial);
  let proc: Bun.Subprocess<ReadableStream<Uint8Array>, "pipe", "pipe">;
  try {
    proc = Bun.spawn(argv, { stdin: counted, stdout: "pipe", stderr: "pipe" });
    decoder = proc;
  } catch {
    throw new DumpError(
      `${printableName(spec)} is ${compression}-compressed, but the '${argv[0]}' command is not installed. Install it (apt-get install ${argv[0] === "xz" ? "xz-utils" : argv[0]}${compression === "bzip2" ? ", or lbzip2 to decode on every core" : ""}) and try again.`,
    );
  }
  const stderr = new Response(proc.stderr).text();
  const failure = async (code: number): Promise<DumpError | null> => {
    if (code === 0 || proc.signalCode !== null) return null;
    const broken = raw.broken?.();
    if (broken) return broken;
    // The decoders put the reason on their first line: "bzip2: Data integrity error…", "xz: (stdin): Unexpected end of
    // input", "lbzip2: stdin: compressed data error: bad block header magic", "bzip2: Compressed file ends unexpectedly;".
    // Its own final "." or ";" gives way to the message's: every damage is a sentence that ends, as the XML's is, and
    // what follows it (update's, start's) is joined with a space.
    const first = (await stderr).trim().split("\n")[0] || `exit code ${code}`;
    const why = first.replace(/^[\w.-]+:\s*(\(stdin\):\s*|stdin:\s*)?/, "").replace(/[.;]$/, "");
    return new DumpError(`${printableName(spec)}: the ${compression} stream is damaged (${why}).`, {
      damaged: true,
    });
  };
  return {
    spec,
    compression,
    totalBytes: raw.size,
    bytesRead: () => read,
    xml: proc.stdout.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>(
        undefined,
        new ByteLengthQueuingStrategy({ highWaterMark: READ_AHEAD_BYTES }),
        new ByteLengthQueuingStrategy({ highWaterMark: READ_AHEAD_BYTES }),
      ),
    ),
    async finished() {
      const err = await failure(await proc.exited);
      if (err) throw err;
    },
    async decoderError() {
      const code = await Promise.race([proc.exited, Bun.sleep(DECODER_GRACE_MS).then(() => null)]);
      if (code === null) {
        proc.kill();
        return null;
      }
      return failure(code);
    },
    cancel() {
      proc.kill();
    },
  };
}
