/**
 * bun bench/http/dashboard-sign-in.ts [--keys N] [--rounds R] [--redis] [--stall] [--snapshot FILE] [--root DIR]
 *
 * What a dashboard sign-in costs the server with a large key store (issue 57, D81): N keys (default
 * 50,000) over N/10 accounts, written as the key tool writes keys.json, and one account holder
 * with a sign-in token. The real server (the --root checkout's src/cli/start.ts, this one by
 * default: give an older checkout's to measure it the same way) answers, in alternation, R times
 * each: the sign-in form (GET, which reads no store: the baseline), a sign-in with a wrong token
 * naming an existing account, and the holder's signed-in page. Each attempt comes from its own
 * address (X-Forwarded-For from a trusted proxy) and names its own account, so that no sign-in
 * limit is met. Medians in ms, and each against the form's; with --redis, once more with the
 * keys in Redis (`keys import`).
 *
 * With --stall, instead: the longest stall of the server's request thread when the key tool changes one
 * key (R9). A client asks /healthz (no key; its own address each time) one request after another for
 * the whole round, timing each; meanwhile the key tool revokes one key of the store, and once it
 * returns that key is sent (it must be refused: D18). A round's figure is the slowest /healthz
 * answered from the revocation's start until 300 ms after the refusal (and, apart, the slowest while the
 * tool itself ran, a process beside the server); its baseline, the slowest in a second of /healthz
 * before it with nothing changing. Medians of R rounds, ms.
 */
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    keys: { type: "string", default: "50000" },
    rounds: { type: "string", default: "15" },
    redis: { type: "boolean", default: false },
    stall: { type: "boolean", default: false },
    snapshot: { type: "string" },
    root: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "Usage: bun bench/http/dashboard-sign-in.ts [--keys N] [--rounds R] [--redis] [--stall] [--snapshot FILE] [--root DIR]\n" +
      "  --stall     the request thread's longest stall when the key tool revokes one key, not the sign-ins\n" +
      "  --root DIR  the checkout whose server and key tool run (default this one); --redis needs redis-server.",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { updateKeyFile } = await import("../../src/access");
const { startRedis } = await import("../redis-server");
const { benchSnapshot, ROOT, spawnServer } = await import("../servers");

const [keyCount, rounds, root] = [Number(values.keys), Number(values.rounds), values.root ?? ROOT];
const work = (await Bun.$`mktemp -d`.text()).trim();
const { path: snapshot } = await benchSnapshot(values.snapshot, work);
const data = join(work, "data");
const accounts = Math.max(1, Math.floor(keyCount / 10));
const accountName = (a: number) => `acct-${String(a).padStart(6, "0")}`;
/** The text of the bench's i-th key (--stall revokes the first R by it); the others are never sent. */
const keyText = (i: number) => `wk_${String(i).padStart(32, "0")}`;
updateKeyFile(data, (file) => {
  for (let i = 0; i < keyCount; i++) {
    const account = accountName(i % accounts);
    file.accounts[account] ??= { plan: "growth" };
    file.keys.push({
      id: `key_b${String(i).padStart(11, "0")}`,
      hash: createHash("sha256").update(keyText(i)).digest("hex"),
      name: `key ${i}`,
      account,
      scopes: ["read"],
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: null,
      revoked_at: null,
    });
  }
});
const tool = (env: Record<string, string>, ...args: string[]) =>
  Bun.$`bun ${join(root, "src/cli/keys.ts")} ${args}`.env({ ...process.env, ...env }).text();
const token = JSON.parse(await tool({ TOME_DATA: data }, "account", "create", "--account", "holder", "--json"))
  .dashboard_token as string;
console.error(
  `${keyCount} keys, ${accounts} accounts: keys.json is ${(statSync(join(data, "keys.json")).size / 1e6).toFixed(1)} MB`,
);

let address = 0;
/** The next client address, and a wrong token naming the next account. */
const stranger = () => {
  address++;
  return {
    headers: { "x-forwarded-for": `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}` },
    token: `wd_${"A".repeat(32)}.${accountName(address % accounts)}`,
  };
};
const timed = async (request: () => Promise<Response>) => {
  const started = performance.now();
  const r = await request();
  await r.arrayBuffer();
  return { ms: performance.now() - started, r };
};

/** The server of this checkout on the bench's snapshot, with these settings. */
const startTome = (env: Record<string, string>) =>
  spawnServer(["bun", join(root, "src/cli/start.ts")], {
    ...process.env,
    ...env,
    TOME_SNAPSHOT: snapshot,
    TOME_KEY_MS_PER_SECOND: "0",
    TOME_TRUSTED_PROXIES: "127.0.0.1,::1",
  });

async function measure(mode: string, env: Record<string, string>) {
  const server = await startTome(env);
  const base = server.url;
  const post = (headers: Record<string, string>, cookie: string, csrf: string, t: string) =>
    fetch(`${base}/dashboard/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { ...headers, cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, token: t }),
    });
  /** The sign-in form (timed: the baseline), its CSRF cookie and field. */
  const formOf = async (headers: Record<string, string>) => {
    const started = performance.now();
    const r = await fetch(`${base}/dashboard/sign-in`, { headers });
    const text = await r.text();
    const ms = performance.now() - started;
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)![1]!;
    return { ms, cookie: r.headers.get("set-cookie")!.split(";")[0]!, csrf };
  };
  const holder = stranger().headers;
  const form = await formOf(holder);
  const signedIn = await post(holder, form.cookie, form.csrf, token);
  const session = signedIn.headers
    .getSetCookie()
    .find((c) => /tome_session=/.test(c))!
    .split(";")[0]!;
  const times = { form: [] as number[], wrong: [] as number[], page: [] as number[] };
  for (let i = 0; i < rounds + 2; i++) {
    const s = stranger();
    const f = await formOf(s.headers);
    const wrong = await timed(() => post(s.headers, f.cookie, f.csrf, s.token));
    if (wrong.r.status !== 401) throw new Error(`a wrong sign-in answered ${wrong.r.status}`);
    const page = await timed(() => fetch(`${base}/dashboard`, { headers: { ...holder, cookie: session } }));
    if (page.r.status !== 200) throw new Error(`the holder's page answered ${page.r.status}`);
    // The first two of each are warm-up.
    if (i < 2) continue;
    times.form.push(f.ms);
    times.wrong.push(wrong.ms);
    times.page.push(page.ms);
  }
  await server.stop();
  const [form_, wrong_, page_] = [median(times.form), median(times.wrong), median(times.page)];
  console.log(
    `${mode.padEnd(6)} form ${form_.toFixed(2)} ms | wrong sign-in ${wrong_.toFixed(2)} ms (${(wrong_ / form_).toFixed(1)}×) | signed-in page ${page_.toFixed(2)} ms (${(page_ / form_).toFixed(1)}×)`,
  );
}

/** --stall: the slowest /healthz while the key tool revokes one key and the server takes the change, R rounds. */
async function measureStall(env: Record<string, string>) {
  const server = await startTome(env);
  const probe = async () => (await timed(() => fetch(`${server.url}/healthz`, { headers: stranger().headers }))).ms;
  const [stalls, toolRan, quiet, refusedAfter] = [[] as number[], [] as number[], [] as number[], [] as number[]];
  // The first /healthz reads the store as the server holds it; a warm-up.
  for (let i = 0; i < 200; i++) await probe();
  for (let round = 0; round < rounds; round++) {
    let probes = 0;
    let slowest = 0;
    for (const until = performance.now() + 1000; performance.now() < until; probes++)
      slowest = Math.max(slowest, await probe());
    quiet.push(slowest);
    let [done, returned] = [false, false];
    let [during, whileTool] = [0, 0];
    const probing = (async () => {
      while (!done) {
        const ms = await probe();
        during = Math.max(during, ms);
        if (!returned) whileTool = Math.max(whileTool, ms);
      }
    })();
    await tool({ TOME_DATA: data }, "revoke", `key_b${String(round).padStart(11, "0")}`);
    returned = true;
    const sent = performance.now();
    // Served, it would be a key revoked still working (D18); a connection closed unanswered is said.
    const status = await fetch(`${server.url}/v1/meta`, { headers: { "x-api-key": keyText(round) } }).then(
      async (r) => {
        await r.arrayBuffer();
        return r.status;
      },
      (err: Error) => err.message,
    );
    if (status !== 403) {
      if (typeof status === "number") throw new Error(`the revoked key was answered ${status}`);
      console.error(`round ${round}: the revoked key's request got no answer (${status})`);
    }
    refusedAfter.push(performance.now() - sent);
    await Bun.sleep(300);
    done = true;
    await probing;
    stalls.push(during);
    toolRan.push(whileTool);
    console.error(
      `round ${round}: slowest /healthz ${during.toFixed(1)} ms (${whileTool.toFixed(1)} while the tool ran; quiet ${slowest.toFixed(1)} ms, ${probes} probes)`,
    );
  }
  await server.stop();
  console.log(
    `${keyCount} keys: slowest /healthz while a key is revoked ${median(stalls).toFixed(1)} ms (while the tool ran: ${median(toolRan).toFixed(1)} ms; quiet: ${median(quiet).toFixed(1)} ms) | the revoked key refused ${median(refusedAfter).toFixed(1)} ms after it was sent`,
  );
}

console.log(`root ${root}; ${keyCount} keys; medians of ${rounds}`);
if (values.stall) {
  await measureStall({ TOME_DATA: data });
  await Bun.$`rm -rf ${work}`;
  process.exit(0);
}
await measure("files", { TOME_DATA: data });
if (values.redis) {
  const redis = await startRedis({ aof: false });
  const url = redis.url;
  await tool({ TOME_DATA: data, TOME_REDIS_URL: url }, "import");
  await measure("redis", { TOME_REDIS_URL: url, TOME_DATA: join(work, "unused") });
  await redis.stop();
}
await Bun.$`rm -rf ${work}`;
