/**
 * bun bench/http/idle-close.ts [--answer-after S] [--idle S]
 *
 * When Bun closes a request whose answer has not begun: a Bun.serve with its idle timeout (`--idle`, default
 * SOCKET_IDLE_SECONDS, src/request-time.ts) whose handler answers after `--answer-after` seconds (default 15); a
 * client asks once and prints what it got and when. The bounds of src/request-time.ts (the Redis hold's lease, D181;
 * the search time limit's most, D91) rest on this close coming 10 to 12 s after the request.
 */
import { parseArgs } from "node:util";
import { SOCKET_IDLE_SECONDS } from "../../src/request-time";

const USAGE = `Usage: bun bench/http/idle-close.ts [--answer-after S] [--idle S]
  --answer-after S  when the handler answers, in seconds (default 15)
  --idle S          the server's idleTimeout, in seconds (default ${SOCKET_IDLE_SECONDS}, as the server's)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    "answer-after": { type: "string", default: "15" },
    idle: { type: "string", default: String(SOCKET_IDLE_SECONDS) },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const answerAfter = Number(values["answer-after"]);
const idle = Number(values.idle);
if (!(answerAfter >= 0) || !Number.isInteger(idle) || idle < 1) {
  console.error(`--answer-after takes seconds and --idle whole seconds from 1.\n${USAGE}`);
  process.exit(2);
}
const server = Bun.serve({
  port: 0,
  idleTimeout: idle,
  async fetch() {
    await Bun.sleep(answerAfter * 1000);
    return new Response("answered");
  },
});
const started = performance.now();
try {
  const answer = await fetch(`http://localhost:${server.port}/`);
  console.log(
    `answered ${answer.status} "${await answer.text()}" after ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
} catch (err) {
  console.log(
    `closed unanswered after ${((performance.now() - started) / 1000).toFixed(1)} s (${(err as Error).message.split(":")[0]})`,
  );
}
server.stop(true);
