/**
 * bun bench/load/fairness.ts [--attack KIND] [--victim ROUTE] [--rate N] [--duration S] [--rounds R] [--connections N] [--plan PLAN] [--key-ms-per-second N] [--workers W] [--dashboard-keys N] [--snapshot FILE] [--root DIR] [--json]
 *
 * Whether one key can slow the server for the others (issues 13, 43, 60). The real server on core 0
 * (with --workers W, TOME_SEARCH_WORKERS=W and on every core: its search workers are meant to use them);
 * from core 1, a victim key loads the cheap route /v1/chunk with autocannon (N connections,
 * --victim-rate requests a second in all), alone ("idle") and while an attacker key sends its requests at its plan's
 * whole rate (or --rate), open loop ("attack"). With --victim search the victim sends cheap one-word searches instead
 * (cheapSearches()), which wait for the search workers beside the attacker's (D106).
 * The attacks (--attack):
 *   search        worst-case searches: 500-character queries of long nonsense words (typo
 *                 expansion), long words, a one-letter prefix, common words, quoted common words
 *   hostile-search  500-character queries of quoted pairs of common words, typo'd words and
 *                 words of the text, each ending in a short prefix (issue 57)
 *   mcp-batch     /mcp JSON-RPC batches of 100 get_page calls of the longest page (D54 refuses them)
 *   mcp-get-page  /mcp get_page calls of the longest page, one a request
 *   mcp-deep      /mcp bodies of 64 KB nested 30,000 arrays deep
 *   mcp-held      /mcp get_page calls of the longest page whose bodies' last byte is held back until a second and a
 *                 half before the round ends, then sent for all at once (D162)
 *   page-concat   /v1/page/{longest}?format=concat
 *   head-page     HEAD /v1/page/{longest}?format=concat
 *   if-none-match-page  /v1/page/{longest}?format=concat with its ETag in If-None-Match (304s, no credit)
 *   lucky-hostile /v1/lucky of hostile-search's queries (most find nothing: 404, no credit)
 *   changes       /v1/changes?limit=1000
 *   pdf           /v1/pdf of a different page each time, the longest first (none kept yet: each one rendered)
 *   docs-asset    Swagger UI's script, /docs/assets/swagger-ui-bundle.js (1.7 MB; served without a key)
 *   page-chunks   /v1/page/{longest}?format=chunks&max_chunks=200000 (every chunk, each its own object)
 *   head-page-chunks  HEAD of page-chunks' request
 *   lucky-page    /v1/lucky of the longest page's title, format=chunks, max_chunks=200000
 *   changes-paged /v1/changes?since=0&limit=1000, paging on with offset (wrapping at the end)
 *   mcp-search    /mcp search calls of hostile-search's queries, limit 50
 *   mcp-lucky     /mcp lucky calls of the longest page's title, max_chunks 200000
 *   mcp-changes   /mcp changes calls, limit 1000, paging on with offset
 *   openapi       the OpenAPI document, /v1/openapi.json (served without a key)
 *   docs          the reference's page, /docs (served without a key)
 *   dashboard     the dashboard's account page (/dashboard) of an account of --dashboard-keys keys (default 2,000),
 *                 signed in with its token (its work is charged to the account, D82)
 * Rounds alternate idle and attack; the figures are medians over rounds. The target: the
 * victim's p99 under attack stays under 3× its idle p99.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const HELP = `Usage: bun bench/load/fairness.ts [options]

  --attack KIND     search, hostile-search, mcp-batch, mcp-get-page, mcp-deep, mcp-held, page-concat, head-page,
                    if-none-match-page, lucky-hostile, changes, pdf, docs-asset, page-chunks, head-page-chunks,
                    lucky-page, changes-paged, mcp-search, mcp-lucky, mcp-changes, openapi, docs or dashboard
                    (default search)
  --dashboard-keys N  with --attack dashboard, the keys of the account whose page is asked for (default 2000)
  --victim ROUTE    what the victim asks: chunk (/v1/chunk, default) or search (/v1/search of one word: with
                    --workers W > 0 its searches wait for the search workers beside the attacker's)
  --rate N          the attacker's requests per second (default: its plan's rate; its plan's rate is raised to N)
  --duration S      seconds per run (default 5)
  --rounds R        idle/attack pairs (default 3)
  --connections N   the victim's autocannon connections (default 10)
  --victim-rate N   the victim's requests per second, all connections together (default 200: a client within its share)
  --plan PLAN       the attacker's plan, whose rate it sends at (default growth)
  --key-ms-per-second N  the server's TOME_KEY_MS_PER_SECOND, each key's share of its time (default: the server's,
                    100; 0: no share, so the attacker is held by its rate and the search pool's rules alone)
  --workers W       the server's search workers, TOME_SEARCH_WORKERS (default 0: searches on the
                    request thread, the server on core 0); with W > 0 the server is not pinned
  --snapshot FILE   serve this snapshot (default: one built from the shared English dumps)
  --root DIR        the checkout whose server and key tool to run (default: this one), for a before/after
  --json            print the figures as JSON
`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    attack: { type: "string", default: "search" },
    victim: { type: "string", default: "chunk" },
    rate: { type: "string" },
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    "victim-rate": { type: "string", default: "200" },
    plan: { type: "string", default: "growth" },
    "key-ms-per-second": { type: "string" },
    workers: { type: "string", default: "0" },
    "dashboard-keys": { type: "string", default: "2000" },
    snapshot: { type: "string" },
    root: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { onServerCore, pinLoadGenerator } = await import("../cores");
const { open } = await import("../../src/search");
const { hostileQueries, querySampler } = await import("../queries");
const { benchSnapshot, cpuMs, randomChunkIds, ROOT, spawnServer } = await import("../servers");

const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const RATES: Record<string, number> = { free: 10, starter: 25, growth: 50, business: 100, enterprise: 1000 };
const planRate = RATES[values.plan!];
if (!planRate) throw new Error(`--plan must be one of ${Object.keys(RATES).join(", ")}`);
const rate: number = values.rate ? Number(values.rate) : planRate;
if (values.victim !== "chunk" && values.victim !== "search") throw new Error("--victim must be chunk or search");
// Number("abc") is NaN, and a loop to NaN makes no key: the page of an empty account would be measured.
if (!/^[1-9]\d*$/.test(values["dashboard-keys"]!)) throw new Error("--dashboard-keys must be a positive integer");

/** Worst cases of today's engine: typo expansion of long unknown words, prefix expansion, common words, phrases of common words. */
function worstQueries(): string[] {
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  const word = (n: number) =>
    Array.from({ length: n }, () => "abcdefghijklmnopqrstuvwxyz"[Math.floor(random() * 26)]).join("");
  return [
    Array.from({ length: 50 }, () => word(9))
      .join(" ")
      .slice(0, 500),
    Array.from({ length: 12 }, () => word(40))
      .join(" ")
      .slice(0, 500),
    "a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p",
    "the of and in to a is was for on as by with from that at his which",
    '"the of and" "in the" "of the" a',
    Array.from(
      { length: 60 },
      (_, i) => ["anarchizm", "philosofy", "einstien", "albedoo", "autizm", "aristotel"][i % 6],
    )
      .join(" ")
      .slice(0, 500),
  ];
}

/**
 * The victim's searches: words of six letters or more from the text whose search takes at most 1 ms in process (the
 * median of three, here), as `albedo`: a client within its share whose searches are cheap. Some words of the text take
 * tens of milliseconds (function words, long words with many typo neighbours); those would be the victim's own tail.
 */
function cheapSearches(file: string, count = 200): string[] {
  const engine = open(file);
  const { sampleWords } = querySampler(engine.snapshot);
  const timed = (q: string) => {
    const times = [0, 1, 2].map(() => {
      const started = performance.now();
      engine.search(q);
      return performance.now() - started;
    });
    return median(times);
  };
  const cheap = new Set<string>();
  for (let tries = 0; cheap.size < count && tries < 20 * count; tries++) {
    const word = sampleWords(1, (w) => w.length >= 6 && /^\p{L}+$/u.test(w))[0];
    if (word && !cheap.has(word) && timed(word) <= 1) cheap.add(word);
  }
  if (!cheap.size) throw new Error(`no word of ${file} is searched in 1 ms or less: try another snapshot`);
  return [...cheap];
}

await pinLoadGenerator();
const work = mkdtempSync(join(tmpdir(), "tome-fairness-"));
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const dataDir = join(work, "data");
const root = values.root ? resolve(values.root) : ROOT;
const tool = join(root, "src/cli/keys.ts");
const env = { ...process.env, TOME_DATA: dataDir };
const keyOf = async (name: string, plan: string, scope = "read") =>
  JSON.parse(
    await Bun.$`bun ${tool} create --name ${name} --account ${name} --plan ${plan} --scope ${scope} --json`
      .env(env)
      .text(),
  ).key as string;
// Rendering a PDF needs a key of scope full.
const attackerKey = await keyOf("attacker", values.plan!, values.attack === "pdf" ? "full" : "read");
if (rate > planRate)
  await Bun.$`bun ${tool} plan --account attacker --plan ${values.plan} --rate ${rate}`.env(env).quiet();
const victimKey = await keyOf("victim", "business");
/** --attack dashboard: an account of many keys, and its dashboard token. */
const dashboardToken =
  values.attack === "dashboard"
    ? await (async () => {
        const { createAccountAccess, createKey, updateKeyFile } = await import(join(root, "src/access/index.ts"));
        const keys = Number(values["dashboard-keys"]);
        updateKeyFile(dataDir, (f: never) => {
          for (let i = 0; i < keys; i++)
            createKey(f, { name: `key ${i}`, account: "many", plan: "enterprise", scope: "read", now: Date.now() });
        });
        return updateKeyFile(dataDir, (f: never) => createAccountAccess(f, "many", "enterprise")).token as string;
      })()
    : "";
// The victim's plan must not be what limits it: its rate out of the way.
await Bun.$`bun ${tool} plan --account victim --plan enterprise --rate 1000000`.env(env).quiet();

const workers = Number(values.workers);
const command = ["bun", join(root, "src/cli/start.ts")];
const server = await spawnServer(workers ? command : onServerCore(command), {
  TOME_SNAPSHOT: path,
  TOME_DATA: dataDir,
  TOME_SEARCH_WORKERS: String(workers),
  ...(values["key-ms-per-second"] === undefined ? {} : { TOME_KEY_MS_PER_SECOND: values["key-ms-per-second"] }),
});
const chunkIds = randomChunkIds(snapshot);
const victimPaths =
  values.victim === "search"
    ? cheapSearches(path).map((q) => `/v1/search?q=${encodeURIComponent(q)}`)
    : chunkIds.map((id) => `/v1/chunk/${id}`);
const queries = worstQueries();
const hostile = hostileQueries();
const longestFirst = Array.from(snapshot.pages.ids.keys())
  .sort((a, b) => snapshot.pages.chunkCounts[b]! - snapshot.pages.chunkCounts[a]!)
  .map((i) => snapshot.pages.ids[i]!);
const longest = longestFirst[0]!;
const longestTitle = snapshot.pages.title(snapshot.pages.ids.indexOf(longest));
const pageCount = snapshot.pages.ids.length;

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const getPage = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "get_page", arguments: { page_id: longest } },
});
/** A call of an MCP tool, as a request's body. */
const mcpCall = (id: number, name: string, args: Record<string, unknown>): RequestInit => ({
  method: "POST",
  headers: MCP_HEADERS,
  body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
});
/** The attacker's n-th request, as fetch's arguments. */
const ATTACKS: Record<string, (n: number) => [string, RequestInit]> = {
  search: (n) => [`/v1/search?q=${encodeURIComponent(queries[n % queries.length]!)}`, {}],
  "hostile-search": (n) => [`/v1/search?q=${encodeURIComponent(hostile[n % hostile.length]!)}`, {}],
  "mcp-batch": (n) => [
    "/mcp",
    {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify(Array.from({ length: 100 }, (_, i) => getPage(n * 100 + i))),
    },
  ],
  "mcp-get-page": (n) => ["/mcp", { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(getPage(n)) }],
  "mcp-deep": () => ["/mcp", { method: "POST", headers: MCP_HEADERS, body: "[".repeat(30_000) + "]".repeat(30_000) }],
  "mcp-held": (n) => ["/mcp", { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(getPage(n)) }],
  "page-concat": () => [`/v1/page/${longest}?format=concat`, {}],
  "head-page": () => [`/v1/page/${longest}?format=concat`, { method: "HEAD" }],
  "if-none-match-page": () => [`/v1/page/${longest}?format=concat`, { headers: { "if-none-match": pageEtag } }],
  "lucky-hostile": (n) => [`/v1/lucky?q=${encodeURIComponent(hostile[n % hostile.length]!)}`, {}],
  changes: () => ["/v1/changes?limit=1000", {}],
  pdf: (n) => [`/v1/pdf/${longestFirst[n % longestFirst.length]}`, {}],
  "docs-asset": () => ["/docs/assets/swagger-ui-bundle.js", {}],
  "page-chunks": () => [`/v1/page/${longest}?format=chunks&max_chunks=200000`, {}],
  "head-page-chunks": () => [`/v1/page/${longest}?format=chunks&max_chunks=200000`, { method: "HEAD" }],
  "lucky-page": () => [`/v1/lucky?q=${encodeURIComponent(longestTitle)}&format=chunks&max_chunks=200000`, {}],
  "changes-paged": (n) => [`/v1/changes?since=0&limit=1000&offset=${(n * 1000) % pageCount}`, {}],
  "mcp-search": (n) => ["/mcp", mcpCall(n, "search", { q: hostile[n % hostile.length]!, limit: 50 })],
  "mcp-lucky": (n) => ["/mcp", mcpCall(n, "lucky", { q: longestTitle, max_chunks: 200000 })],
  "mcp-changes": (n) => ["/mcp", mcpCall(n, "changes", { since: 0, limit: 1000, offset: (n * 1000) % pageCount })],
  openapi: () => ["/v1/openapi.json", {}],
  docs: () => ["/docs", {}],
  dashboard: () => ["/dashboard", { headers: { cookie: dashboardCookie } }],
};
const chosen = ATTACKS[values.attack!];
if (!chosen) throw new Error(`--attack must be one of ${Object.keys(ATTACKS).join(", ")}`);
const attackRequest = chosen;
/** The session's cookie, signed in with the account's token as a browser is (the form's CSRF cookie and field first). */
async function dashboardSession(): Promise<string> {
  if (!dashboardToken) return "";
  const form = await fetch(`${server.url}/dashboard/sign-in`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
  const signedIn = await fetch(`${server.url}/dashboard/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: form.headers.getSetCookie()[0]!.split(";")[0]!,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ csrf, token: dashboardToken }),
  });
  if (signedIn.status !== 303) throw new Error(`the dashboard's sign-in answered ${signedIn.status}`);
  return signedIn.headers.getSetCookie()[0]!.split(";")[0]!;
}
const dashboardCookie = await dashboardSession();
/** The longest page's ETag, for if-none-match-page. */
const pageEtag =
  (await fetch(`${server.url}/v1/page/${longest}?format=concat`, { headers: { "x-api-key": victimKey } })).headers.get(
    "etag",
  ) ?? "";

async function victim(phase: string): Promise<{ p50: number; p99: number; rps: number }> {
  let i = 0;
  const result = await autocannon({
    url: server.url,
    connections,
    duration,
    overallRate: Number(values["victim-rate"]),
    headers: { "x-api-key": victimKey },
    requests: [{ setupRequest: (req) => ({ ...req, path: victimPaths[i++ % victimPaths.length] }) }],
  });
  if (result.non2xx) {
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => `${count} × ${status}`);
    console.error(`${phase}: the victim got ${result.non2xx} answers that were not 2xx (${statuses.join(", ")})`);
  }
  return { p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average };
}

/**
 * mcp-held: each request over its own socket, all of its body but the last byte sent at once; the last bytes of all
 * sent together a second and a half before the round ends (those made later are sent whole).
 */
function heldAttack(): { stop: () => Promise<Record<number, number>> } {
  const statuses: Record<number, number> = {};
  const { hostname, port } = new URL(server.url);
  const sockets: { write(data: string): unknown; end(): void }[] = [];
  const answered: Promise<void>[] = [];
  let released = false;
  let n = 0;
  const timer = setInterval(() => {
    const [, init] = attackRequest(n++);
    const body = init.body as string;
    const head = `POST /mcp HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${attackerKey}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    let got = "";
    answered.push(
      new Promise<void>((done) => {
        Bun.connect({
          hostname,
          port: Number(port),
          socket: {
            data: (_s, bytes) => {
              got += bytes.toString();
            },
            close: () => {
              const status = Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? 0);
              statuses[status] = (statuses[status] ?? 0) + 1;
              done();
            },
            error: () => {},
          },
        }).then(
          (socket) => {
            socket.write(head + (released ? body : body.slice(0, -1)));
            sockets.push({ write: (d) => socket.write(d), end: () => socket.end() });
            if (released) setTimeout(() => socket.end(), 1000);
          },
          () => done(),
        );
      }),
    );
  }, 1000 / rate);
  const release = setTimeout(
    () => {
      released = true;
      for (const socket of sockets) socket.write("}");
      setTimeout(() => {
        for (const socket of sockets) socket.end();
      }, 1000);
    },
    Math.max(0, duration * 1000 - 1500),
  );
  return {
    stop: async () => {
      clearInterval(timer);
      clearTimeout(release);
      for (const socket of sockets) socket.end();
      await Promise.all(answered);
      return statuses;
    },
  };
}

/** The attacker at its plan's rate, open loop, until stopped: statuses counted. */
function attack(): { stop: () => Promise<Record<number, number>> } {
  if (values.attack === "mcp-held") return heldAttack();
  const statuses: Record<number, number> = {};
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  const timer = setInterval(() => {
    const [path, init] = attackRequest(n++);
    const p = fetch(server.url + path, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), "x-api-key": attackerKey },
    })
      .then(async (r) => {
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      })
      .catch(() => {
        statuses[0] = (statuses[0] ?? 0) + 1;
      });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }, 1000 / rate);
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
      return statuses;
    },
  };
}

const idle: { p50: number; p99: number; rps: number }[] = [];
const attacked: typeof idle = [];
const attackerStatuses: Record<number, number>[] = [];
const attackCpu: number[] = [];
try {
  await victim("warm-up");
  for (let r = 0; r < rounds; r++) {
    idle.push(await victim(`round ${r + 1}, idle`));
    const before = cpuMs(server.pid);
    const attacker = attack();
    attacked.push(await victim(`round ${r + 1}, under attack`));
    attackerStatuses.push(await attacker.stop());
    attackCpu.push((cpuMs(server.pid) - before) / (duration * 1000));
    console.error(
      `round ${r + 1}: victim p99 idle ${idle.at(-1)!.p99} ms, under attack ${attacked.at(-1)!.p99} ms; attacker ${JSON.stringify(attackerStatuses.at(-1))}`,
    );
  }
} finally {
  await server.stop();
}

const figures = {
  attack: values.attack,
  victim: values.victim,
  keyMsPerSecond: values["key-ms-per-second"] ?? "default",
  plan: values.plan,
  workers,
  attackerRate: rate,
  victimIdle: {
    p50: median(idle.map((x) => x.p50)),
    p99: median(idle.map((x) => x.p99)),
    rps: Math.round(median(idle.map((x) => x.rps))),
  },
  victimAttacked: {
    p50: median(attacked.map((x) => x.p50)),
    p99: median(attacked.map((x) => x.p99)),
    rps: Math.round(median(attacked.map((x) => x.rps))),
  },
  p99Ratio: median(attacked.map((x, i) => x.p99 / idle[i]!.p99)),
  throughputRatio: median(attacked.map((x, i) => x.rps / idle[i]!.rps)),
  attackerStatuses,
  serverCpuUnderAttack: median(attackCpu),
};
if (values.json) console.log(JSON.stringify(figures, null, 2));
else {
  console.log(
    `victim /v1/${values.victim} (${connections} connections): idle p50 ${figures.victimIdle.p50} ms, p99 ${figures.victimIdle.p99} ms, ${figures.victimIdle.rps} req/s`,
  );
  console.log(
    `under attack (${values.plan} key, ${rate}/s of ${values.attack}; ${workers} search workers): p50 ${figures.victimAttacked.p50} ms, p99 ${figures.victimAttacked.p99} ms, ${figures.victimAttacked.rps} req/s`,
  );
  console.log(
    `p99 under attack ÷ idle: ${figures.p99Ratio.toFixed(2)} (target < 3); throughput ratio ${figures.throughputRatio.toFixed(2)}`,
  );
  console.log(`attacker answers per round: ${JSON.stringify(attackerStatuses)}`);
}
