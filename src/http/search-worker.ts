/**
 * A search worker (pool/pool.ts): opens each snapshot served (mapped, its pages shared with every
 * thread) and answers the tasks sent to it, one at a time, in the order sent, building each
 * answer's JSON here; the tasks of one message (D166) are answered in one message. A snapshot let
 * go is collected at once, so that its mappings go.
 */
import { openUnguarded, type SearchWork } from "../search";
import { SnapshotError } from "../snapshot";
import { apiContext, type ApiContext } from "./context";
import { ApiError } from "./errors";
import { coreWaitClock, lowerThisThread } from "../scheduling";
import { toolsOf, type Tool } from "./mcp/tools";
import {
  type BatchedTask,
  packAnswer,
  packAnswers,
  type WorkerFile,
  type WorkerOpened,
  type WorkerOutcome,
  type WorkerReply,
  type WorkerRequest,
  type WorkerTask,
} from "./pool/messages";

declare const self: Worker;

interface Opened {
  ctx: ApiContext;
  tools: Map<string, Tool>;
}

/** The snapshots open here, by generation; a string says why one could not be opened. */
const served = new Map<number, Opened | string>();
/** The work of the searches of the task under way, as its engine tells it (the request thread's /metrics counts it). */
let work: SearchWork[] = [];
/** This thread's time waiting for a core: a task's time less it is what its key is charged (D144). */
const coreWait = coreWaitClock();
// Its file is closed by the pool when it ends this worker (a terminated thread runs no cleanup).
if (coreWait.file !== undefined) self.postMessage({ file: coreWait.file } satisfies WorkerFile);

/** A snapshot opened here, or why not; and whether its structure was checked here again (D119). */
function opened(path: string, id: string, checked: string, searchTimeoutMs: number | undefined) {
  let checkedAgain = true;
  const outcome = (at: Opened | string) => ({ at, checkedAgain });
  try {
    // No lease here: the request thread holds it and lets go for every thread (D84); a lease breaking signals the process, whose listener is the request thread's.
    // The file the request thread checked (its identity the same) is not checked again here (D119).
    const engine = openUnguarded(path, checked);
    checkedAgain = engine.snapshot.checked !== checked;
    // The file may have been replaced since the request thread opened it: another snapshot must not answer.
    if (engine.snapshot.meta.contentHash !== id) return outcome(`${path} holds another snapshot now`);
    // Every section mapped now (not when first read), all from the file whose header was read. On Linux the mapping
    // maps every section from the one file it opened (its fd), whatever file is at the path later, and refuses one
    // that is not the file whose header was read; elsewhere (Bun.mmap, by path) mapping them now keeps what is renamed
    // onto the path later from them, and the container refuses another renamed onto it in between (D84).
    engine.snapshot.container.mapAll();
    engine.watch((done) => work.push(done));
    const ctx = apiContext(engine, [], searchTimeoutMs);
    return outcome({ ctx, tools: new Map(toolsOf(ctx).map((tool) => [tool.name, tool])) });
  } catch (err) {
    return outcome(err instanceof Error ? err.message : String(err));
  }
}

/** A task's outcome; a route's answer as its JSON text, packed with the reply's head once its time is known. */
type Outcome = WorkerOutcome | { text: string };

function run(at: Opened, task: WorkerTask, args: unknown): Outcome {
  const { answers } = at.ctx;
  switch (task) {
    case "search":
      return { text: JSON.stringify(answers.search(args as Parameters<typeof answers.search>[0])) };
    case "lucky":
      return { text: JSON.stringify(answers.lucky(args as Parameters<typeof answers.lucky>[0])) };
    case "tool:search":
    case "tool:lucky":
      return { tool: at.tools.get(task.slice(5))!.answer(args) };
  }
}

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const m = event.data;
  if (m.kind === "nice") {
    lowerThisThread(m.steps);
    return;
  }
  if (m.kind === "open") {
    const { at, checkedAgain } = opened(m.path, m.id, m.checked, m.searchTimeoutMs);
    served.set(m.generation, at);
    self.postMessage({ opened: m.generation, checkedAgain } satisfies WorkerOpened);
    return;
  }
  if (m.kind === "close") {
    const at = served.get(m.generation);
    served.delete(m.generation);
    // Unmapped now: nothing here reads it again, and a collector that scans stacks could keep its buffers (and so the
    // file's mappings) for long.
    if (typeof at === "object") at.ctx.engine.snapshot.container.letGo();
    setTimeout(() => Bun.gc(true), 0);
    return;
  }
  if (m.kind === "runs") {
    // Several tasks sent together (D166): each run and timed on its own, as one sent alone; one message answers them.
    const replies = (JSON.parse(m.tasks) as BatchedTask[]).map(([job, generation, task, args]) =>
      perform(job, generation, task, args),
    );
    const packed = packAnswers(replies);
    self.postMessage(packed, [packed]);
    return;
  }
  const reply = perform(m.job, m.generation, m.task, JSON.parse(m.args));
  if ("text" in reply) {
    // The body's bytes are handed over, not copied: the request thread sends them as they are.
    const packed = packAnswer(reply, reply.text);
    self.postMessage(packed, [packed]);
    return;
  }
  self.postMessage(reply satisfies WorkerReply);
};

/** Runs one task, and times it: its time in this thread, less what it waited for a core while other threads ran (D144). */
function perform(job: number, generation: number, task: WorkerTask, args: unknown) {
  const started = performance.now();
  const waitedBefore = coreWait.read();
  work = [];
  const at = served.get(generation);
  let outcome: Outcome;
  if (at === undefined || typeof at === "string") outcome = { missing: at ?? "not opened here" };
  else {
    try {
      outcome = run(at, task, args);
    } catch (err) {
      outcome =
        err instanceof ApiError
          ? {
              error: {
                status: err.status,
                code: err.code,
                message: err.message,
                details: err.details,
                extra: err.extra,
                headers: err.headers,
              },
            }
          : err instanceof SnapshotError
            ? { damaged: err.message }
            : { fault: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
  }
  // Where the clock of waits is known (D144); the answer's JSON is made, its bytes not yet packed.
  const waited = coreWait.read() - waitedBefore;
  const ms = Math.max(0, performance.now() - started - (Number.isFinite(waited) ? waited : 0));
  return { job, ms, work, ...outcome };
}
