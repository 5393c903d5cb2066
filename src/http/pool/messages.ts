/** What the request thread and a search worker say to each other (pool.ts, worker.ts). */
import type { SearchWork } from "../../search";
import type { ErrorBody } from "../errors";

/** What a worker runs: a route's JSON answer, or an MCP tool's answer (its arguments read already). */
export type WorkerTask = "search" | "lucky" | "tool:search" | "tool:lucky";

export type WorkerRequest =
  | { kind: "open"; generation: number; path: string; id: string; searchTimeoutMs: number | undefined }
  | { kind: "close"; generation: number }
  | { kind: "run"; job: number; generation: number; task: WorkerTask; args: unknown };

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
  /** The generation is not open in this worker (it could not be opened): the request thread answers. */
  | { missing: string };

/** A worker has opened a generation (or found it cannot: it then answers its tasks as `missing`); it reads it no more until a task comes. */
export interface WorkerOpened {
  opened: number;
}

/** A task's outcome, with the worker's time on it (`ms`, charged to the request's key) and its searches' work (for /metrics). */
export type WorkerReply = { job: number; ms: number; work: SearchWork[] } & WorkerOutcome;
