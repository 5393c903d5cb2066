/** What the request thread and a search worker say to each other (pool.ts, worker.ts). */
import type { SearchWork } from "../../search";
import type { ErrorBody } from "../errors";

/** What a worker runs: a route's JSON answer, or an MCP tool's answer (its arguments read already). */
export type WorkerTask = "search" | "lucky" | "tool:search" | "tool:lucky";

/**
 * A task's message holds only strings and numbers (its arguments as JSON text): Bun copies such an object to the other
 * thread without its structured clone's serializer (bench/http/RESULTS.md, D131).
 */
export type WorkerRequest =
  | {
      kind: "open";
      generation: number;
      path: string;
      id: string;
      /** The file's identity as the request thread checked its structure (D119): the same file is not checked again. */
      checked: string;
      searchTimeoutMs: number | undefined;
    }
  | { kind: "close"; generation: number }
  /** Sent first: lower the worker's thread's scheduling priority by this many nice steps (D142). */
  | { kind: "nice"; steps: number }
  | { kind: "run"; job: number; generation: number; task: WorkerTask; args: string }
  /**
   * Several tasks in one message (D166): `tasks` is JSON text of `[job, generation, task, args]` each, `args` the
   * task's arguments as they are (not as text within the text). The worker answers them in one message (packAnswers).
   */
  | { kind: "runs"; tasks: string };

/** One task of a "runs" message, as its JSON reads back. */
export type BatchedTask = [job: number, generation: number, task: WorkerTask, args: unknown];

/** An ApiError's fields, to throw it again on the request thread. */
interface ErrorFields {
  status: number;
  code: string;
  message: string;
  details?: ErrorBody["details"];
  extra?: Record<string, number | string>;
  headers?: Record<string, string>;
}

/** A task's outcome. */
export type WorkerOutcome =
  /** A route's body: its JSON, UTF-8 (transferred, not copied). */
  | { json: Uint8Array }
  | { tool: { structured: Record<string, unknown>; text: string } }
  | { error: ErrorFields }
  | { fault: string }
  /** A SnapshotError (the snapshot damaged where the task read it, D119, D163): thrown again as one on the request thread. */
  | { damaged: string }
  /** The generation is not open in this worker (it could not be opened): the request thread answers. */
  | { missing: string };

/** A worker has opened a generation (or found it cannot: it then answers its tasks as `missing`); it reads it no more until a task comes. */
export interface WorkerOpened {
  opened: number;
  /** Whether the worker checked the file's structure (D119): not the file the request thread checked (or not opened). */
  checkedAgain: boolean;
}

/** A worker's first message: the file its clock of waits for a core reads (D144), for the pool to close once it ends the worker. */
export interface WorkerFile {
  file: number;
}

/** A task's outcome, with the worker's time on it (`ms`, charged to the request's key) and its searches' work (for /metrics). */
export type WorkerReply = ReplyHead & WorkerOutcome;

interface ReplyHead {
  job: number;
  ms: number;
  work: SearchWork[];
}

/**
 * A route's answer as the worker sends it (D131): one ArrayBuffer, transferred, not copied; no object around it to
 * serialize. Its first 4 bytes are the length of the head that follows (ReplyHead as JSON, UTF-8), then the body.
 */
export function packAnswer(head: ReplyHead, body: string): ArrayBuffer {
  const headText = JSON.stringify([head.job, head.ms, head.work]);
  const headBytes = Buffer.byteLength(headText);
  const packed = new Uint8Array(4 + headBytes + Buffer.byteLength(body));
  new DataView(packed.buffer).setUint32(0, headBytes, true);
  utf8.encodeInto(headText, packed.subarray(4));
  utf8.encodeInto(body, packed.subarray(4 + headBytes));
  return packed.buffer;
}

/** packAnswer's buffer as the reply it holds: the body a view of the bytes, not a copy. */
export function unpackAnswer(packed: ArrayBuffer): WorkerReply {
  const headBytes = new DataView(packed).getUint32(0, true);
  const [job, ms, work] = JSON.parse(utf8Text.decode(new Uint8Array(packed, 4, headBytes))) as [
    number,
    number,
    SearchWork[],
  ];
  return { job, ms, work, json: new Uint8Array(packed, 4 + headBytes) };
}

/** The top bit of a packed buffer's first word: it holds several answers (packAnswers), not one. */
const SEVERAL = 0x8000_0000;

/**
 * Several tasks' replies in one ArrayBuffer, transferred (D166): the first 4 bytes are the head's length with the top
 * bit set, then the head (JSON, UTF-8: `[job, ms, work, n]` a reply, `n` the byte length of its body when it is a
 * route's answer, which follow the head one after another in the order of the replies, or the outcome itself when it
 * is not: a tool's answer, an error, a fault, a generation missing), then the bodies.
 */
export function packAnswers(replies: (ReplyHead & (WorkerOutcome | { text: string }))[]): ArrayBuffer {
  const head: unknown[] = [];
  let bodies = 0;
  for (const r of replies) {
    if ("text" in r) {
      const n = Buffer.byteLength(r.text);
      bodies += n;
      head.push([r.job, r.ms, r.work, n]);
    } else {
      const { job, ms, work, ...outcome } = r;
      head.push([job, ms, work, outcome]);
    }
  }
  const headText = JSON.stringify(head);
  const headBytes = Buffer.byteLength(headText);
  const packed = new Uint8Array(4 + headBytes + bodies);
  new DataView(packed.buffer).setUint32(0, (headBytes | SEVERAL) >>> 0, true);
  utf8.encodeInto(headText, packed.subarray(4));
  let at = 4 + headBytes;
  for (const r of replies) if ("text" in r) at += utf8.encodeInto(r.text, packed.subarray(at)).written;
  return packed.buffer;
}

/** A packed buffer's replies: one (packAnswer) or several (packAnswers); each body a view of the bytes, not a copy. */
export function unpackAnswers(packed: ArrayBuffer): WorkerReply[] {
  const first = new DataView(packed).getUint32(0, true);
  if (!(first & SEVERAL)) return [unpackAnswer(packed)];
  const headBytes = first & ~SEVERAL;
  const head = JSON.parse(utf8Text.decode(new Uint8Array(packed, 4, headBytes))) as [
    number,
    number,
    SearchWork[],
    number | WorkerOutcome,
  ][];
  let at = 4 + headBytes;
  return head.map(([job, ms, work, n]) => {
    if (typeof n === "object") return { job, ms, work, ...n };
    const json = new Uint8Array(packed, at, n);
    at += n;
    return { job, ms, work, json };
  });
}

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();
