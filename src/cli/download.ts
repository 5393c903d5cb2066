/**
 * Downloads a URL to a file, resumably: the bytes go to <file>.part and, when the connection
 * drops or a later run finds the part, the rest is asked for with an HTTP Range request. The
 * version first seen (ETag, else Last-Modified) goes with it as If-Range, so that a file
 * replaced on the server meanwhile (a "latest" dump a month on) is downloaded again from its
 * start rather than spliced. The file appears, renamed from .part, only once complete.
 */
import { existsSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { cannotReachSaid, DumpError, fetchFailureSaid } from "../ingest";
import { printableName } from "../printable";

export interface DownloadOptions {
  onProgress?: (received: number, total: number | undefined) => void;
  /** Attempts in a row that may fail without a byte more before giving up (default 5). */
  retries?: number;
  /** The wait before the first retry after no progress, doubled at each (default 1000 ms). */
  retryDelayMs?: number;
  log?: (line: string) => void;
}

const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/** Bytes free to this user on the disk of dir, when the system says. */
function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

class WriteFailure extends Error {
  constructor(override readonly cause: NodeJS.ErrnoException) {
    super(cause.message);
  }
}

/** The most a name in dumps/ may take of a URL's: its .part.version must fit a file system's 255 bytes. */
const MAX_NAME = 200;

/**
 * The file name a URL's dump is kept under: the last segment of its path, still percent-encoded (so never a
 * folder, `..` or NUL), its start and end kept when too long (the end holds the compression's suffix).
 */
export function fileNameOf(url: string): string {
  const name = basename(new URL(url).pathname) || "dump";
  return name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME / 2)}-${name.slice(-(MAX_NAME / 2 - 1))}`;
}

/** What one request brought: done, or why it stopped and whether to try again. */
type Attempt = { done: true } | { done: false; why: string; retry: boolean };

/** Downloads url to dest (nothing to do when dest exists), resuming from dest.part. */
export async function download(url: string, dest: string, options: DownloadOptions = {}): Promise<void> {
  if (existsSync(dest)) return;
  const part = `${dest}.part`;
  // What a message names: the URL as given (fetch drops its line breaks, so it downloads all the same) and the part.
  const shownUrl = printableName(url);
  const shownPart = printableName(part);
  const versionFile = `${part}.version`;
  const log = options.log ?? (() => {});
  const retries = options.retries ?? 5;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  let reached = false;
  let failures = 0;
  for (;;) {
    const before = sizeOf(part);
    const attempt = await once();
    if (attempt.done) break;
    const progressed = sizeOf(part) > before;
    failures = progressed ? 0 : failures + 1;
    // Nothing answered at all: a wrong address or no network, said at once rather than retried.
    if (!attempt.retry || !reached || failures > retries) {
      const kept = sizeOf(part);
      throw new DumpError(
        `${attempt.why}${kept ? ` ${mb(kept)} of it are kept in ${shownPart}: run again to resume from there.` : ""}`,
      );
    }
    const wait = progressed ? 0 : retryDelayMs * 2 ** (failures - 1);
    log(
      `download: ${attempt.why} Resuming from ${mb(sizeOf(part))}${wait ? ` in ${(wait / 1000).toFixed(0)} s` : ""}.`,
    );
    if (wait) await Bun.sleep(wait);
  }
  renameSync(part, dest);
  rmSync(versionFile, { force: true });

  async function once(): Promise<Attempt> {
    const offset = sizeOf(part);
    const version = existsSync(versionFile) ? readFileSync(versionFile, "utf8") : "";
    const headers: Record<string, string> = {};
    if (offset > 0) {
      headers.Range = `bytes=${offset}-`;
      if (version) headers["If-Range"] = version;
    }
    let res: Response;
    try {
      res = await fetch(url, { headers, redirect: "follow" });
    } catch (err) {
      return {
        done: false,
        retry: true,
        why: cannotReachSaid(url, err),
      };
    }
    reached = true;
    let start: number;
    let total: number | undefined;
    if (res.status === 206) {
      const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(res.headers.get("content-range") ?? "");
      start = Number(range?.[1] ?? -1);
      total = range?.[2] && range[2] !== "*" ? Number(range[2]) : undefined;
      if (start !== offset) {
        await res.body?.cancel();
        rmSync(part, { force: true });
        return {
          done: false,
          retry: true,
          why: `${shownUrl} answered another range than the one asked for (${res.headers.get("content-range")}): starting over.`,
        };
      }
    } else if (res.status === 200) {
      start = 0;
      const length = Number(res.headers.get("content-length"));
      total = Number.isFinite(length) && length > 0 ? length : undefined;
      if (offset > 0)
        log(
          `download: ${shownUrl} changed since the part in ${shownPart} was downloaded, or cannot resume: downloading it again from the start.`,
        );
      const seen = res.headers.get("etag") ?? res.headers.get("last-modified");
      if (seen) writeFileSync(versionFile, seen);
      else rmSync(versionFile, { force: true });
    } else if (res.status === 416 && offset > 0) {
      // Asked for bytes past the end: complete if the part is the whole file.
      await res.body?.cancel();
      const whole = Number(/\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1]);
      if (whole === offset) return { done: true };
      rmSync(part, { force: true });
      return {
        done: false,
        retry: true,
        why: `${shownPart} is not a part of ${shownUrl} as it is now: starting over.`,
      };
    } else {
      await res.body?.cancel();
      return {
        done: false,
        retry: res.status >= 500 || res.status === 429,
        why: `cannot download ${shownUrl}: HTTP ${res.status} ${res.statusText}.`,
      };
    }
    if (!res.body) return { done: false, retry: true, why: `${shownUrl} answered with no body.` };
    // A mirror's error or login page sent as 200 would be kept as the dump, and taken as whole by every later run.
    if (/^\s*text\/html\b/i.test(res.headers.get("content-type") ?? "")) {
      await res.body.cancel();
      return {
        done: false,
        retry: false,
        why: `${shownUrl} answered with a web page (Content-Type ${res.headers.get("content-type")}), not a dump: check the address.`,
      };
    }
    // A size the disk cannot hold (or a server's bogus one) is said before a byte is written, not at ENOSPC hours later.
    const free = freeBytes(dirname(part));
    if (total !== undefined && free !== undefined && total - start > free) {
      await res.body.cancel();
      return {
        done: false,
        retry: false,
        why: `${shownUrl} is ${mb(total)}: the ${mb(total - start)} still to download do not fit in the ${mb(free)} free on the disk of ${printableName(dirname(part))}. Free space there and run again.`,
      };
    }
    const file = await open(part, start === 0 ? "w" : "a");
    let received = start;
    options.onProgress?.(received, total);
    // The disk's refusal (ENOSPC, EDQUOT, EIO) is no network's: retried, it would only fail again.
    const write = async (chunk: Uint8Array) => {
      try {
        // A write the disk cut short (full halfway through the chunk) is carried on, so that its ENOSPC is seen.
        for (let at = 0; at < chunk.byteLength; ) at += (await file.write(chunk, at)).bytesWritten;
      } catch (err) {
        throw new WriteFailure(err as NodeJS.ErrnoException);
      }
    };
    try {
      for await (const chunk of res.body) {
        await write(chunk);
        received += chunk.byteLength;
        options.onProgress?.(received, total);
      }
    } catch (err) {
      if (err instanceof WriteFailure) {
        const need = total === undefined ? "" : `, ${mb(total - received)} more for the rest`;
        throw new DumpError(
          `cannot write ${shownPart}: ${printableName(err.cause.message)}. Free space on the disk of ${printableName(dirname(part))} (${mb(received)} of ${shownUrl} are kept in ${shownPart}${need}), then run again to resume from there.`,
        );
      }
      return {
        done: false,
        retry: true,
        why: `the download of ${shownUrl} broke off at ${mb(received)}${total ? ` of ${mb(total)}` : ""} (${fetchFailureSaid(err)}).`,
      };
    } finally {
      await file.close();
    }
    if (total !== undefined && received < total) {
      return { done: false, retry: true, why: `the download of ${shownUrl} ended at ${mb(received)} of ${mb(total)}.` };
    }
    return { done: true };
  }
}
