/**
 * Every setting Tome reads from the environment, in one place: its name, default and meaning
 * (SETTINGS, which `--help` and the README's table are made from), read and checked once by
 * readConfig() when a command starts (mainOf hands the result to the command), and handed down
 * from there. No library layer reads process.env: the three that need a setting (the snapshot's
 * zstd, the build's memory log, the build's parsing threads) are told by applyConfig().
 *
 * `bun src/cli/config.ts` prints the table as Markdown (README.md's "Configuration" holds it;
 * test/config.test.ts checks that they agree).
 */
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { UserError } from "../errors";
import { commandLine, startedByNpm } from "../invocation";
// TOME_SEARCH_WORKERS above MAX_SEARCH_WORKERS is refused; one per core stops at it. The bounds and defaults come
// from leaf modules, not from the layers they bound: a command's --help and its arguments are read before the engine
// loads (the layers are loaded by applyConfig only to be told a setting, and by the command after its arguments).
import { LOWEST, MAX_BUILD_WORKERS, MAX_SEARCH_WORKERS } from "../scheduling";
import { printableName } from "../printable";
import { DEFAULT_KEY_MS_PER_SECOND, MAX_SEARCH_TIMEOUT_MS, SEARCH_BUDGET_MS } from "../request-time";

/** The command that makes a key with every right, on the account the first start creates (start's help and its advice). */
export const NEW_KEY_COMMAND = commandLine("keys create --name NAME --plan enterprise --scope full");

export interface Setting {
  name: string;
  /** The default, as a reader sees it ("" when unset means off or none). */
  default: string;
  meaning: string;
  /** The commands that read it. */
  usedBy: string;
}

// Not a setting, but the environment says it: npm ran the start script (npm start), rather than Bun
// (bun run start) or another script (npm test, whose tests start servers). Commands then name the
// server "npm start" (src/invocation.ts); told now, before any command's --help text is made. Bun's
// `bun run` keeps the npm_config_user_agent and npm_execpath it inherits from npm, but sets
// npm_command to "run-script"; npm sets "start" (npm start) or "run" (npm run start).
startedByNpm(
  process.env.npm_lifecycle_event === "start" &&
    (process.env.npm_command === "start" || process.env.npm_command === "run") &&
    process.env.npm_config_user_agent?.startsWith("npm/") === true,
  // Both set it to the script's name; a relative path typed with either is read from the folder of the script's
  // package, Tome's or another's that runs Tome (src/cli/main.ts).
  process.env.npm_lifecycle_event !== undefined,
);

/**
 * The most TOME_KEY_MS_PER_SECOND may be (D25): a second of the server's time on its request thread and the most
 * search workers it may have. More could never be spent, so it would mean no limit, which is 0; a figure past a
 * number's range (any run of digits was taken) became Infinity, and the work share computed NaN.
 */
const MAX_KEY_MS_PER_SECOND = 1000 * (1 + MAX_SEARCH_WORKERS);

/** The server's search threads run this many nice steps below its request thread unless told otherwise (D142). */
const SEARCH_WORKER_NICE = 10;
/** Nice steps a build lowers itself by (D189): as far as the search workers are below the request thread (D142). */
const BUILD_NICE = SEARCH_WORKER_NICE;

/**
 * The snapshots folder every command reads (D86; src/cli/snapshots.ts): not a setting, no setting moves it. Here, so
 * that the commands' --help names it without loading the snapshot layer.
 */
export const SNAPSHOT_DIR = "snapshots";

/**
 * TOME_DATA's default: the folder of the key store and the usage counts. Here, with the setting, so that the commands'
 * --help names it without loading the access layer (26 modules with its Redis client, a tenth of a --help's time;
 * test/layers.test.ts).
 */
export const DEFAULT_DATA_DIR = "data";

/** The settings, in the order `--help` and the README list them. */
export const SETTINGS = [
  {
    name: "TOME_SNAPSHOT",
    default: "the newest *.tome in snapshots/",
    meaning:
      "the snapshot to serve (and to export); pinned to this file: the server moves to what is renamed over it, and SIGHUP loads it again",
    usedBy: "start, mcp, snapshot:export",
  },
  {
    name: "TOME_SNAPSHOT_WATCH",
    default: "on",
    meaning:
      '"off": do not watch the folder (e.g. on a network filesystem, where changes are not seen); a newer snapshot is then loaded on SIGHUP only',
    usedBy: "start",
  },
  {
    name: "TOME_DUMP",
    default: "the sample that ships with Tome",
    meaning:
      'the dump to build a snapshot from when snapshots/ holds none, or only the sample (which it then builds past, and keeps): "simple" (the latest Simple English Wikipedia), "en" (English Wikipedia, over 20 GB), a file (plain, .bz2, .gz or .xz) or an http(s) URL, downloaded resumably into dumps/',
    usedBy: "start",
  },
  {
    name: "HOST",
    default: "every interface",
    meaning:
      "the address to listen on (IPv4 and IPv6; 127.0.0.1 keeps it to this machine); a name listens on its first address",
    usedBy: "start",
  },
  {
    name: "PORT",
    default: "8080",
    meaning: "the HTTP port (0 picks a free one); a port another process listens on is refused",
    usedBy: "start",
  },
  {
    name: "TOME_DATA",
    default: `./${DEFAULT_DATA_DIR}`,
    meaning: `API keys and usage counters (keys.json, usage.json and its journal usage.json.journal.N: copy them together to back up), managed with "${commandLine("keys")}"; the first start that serves creates a key and prints it once`,
    usedBy: "start, keys",
  },
  {
    name: "TOME_ADMIN_TOKEN",
    default: "unset: /metrics is not served",
    meaning:
      "opens GET /metrics (Prometheus text) to Authorization: Bearer <token>, and the operator's view of /dashboard to whoever signs in with it; at least 16 characters, no spaces",
    usedBy: "start",
  },
  {
    name: "TOME_PUBLIC_URL",
    default: "unset",
    meaning:
      "where clients reach this server, an origin with no path (e.g. https://tome.example.com; Tome is served at the root, D170): an https URL makes the dashboard's cookies Secure (so do https requests and X-Forwarded-Proto: https from a proxy), and its forms may come from this origin whatever Host header a proxy passes",
    usedBy: "start",
  },
  {
    name: "TOME_TRUSTED_PROXIES",
    default: "unset: the socket's address",
    meaning:
      "the IP addresses of reverse proxies in front of this server, comma-separated (e.g. 127.0.0.1 for deploy/replicas.sh's HAProxy): a request from one is counted as from the last address its X-Forwarded-For names that is not one of them, for the dashboard's sign-in limit (D80)",
    usedBy: "start",
  },
  {
    name: "TOME_REDIS_URL",
    default: "unset: keys in files under TOME_DATA",
    meaning:
      "keys, rate limits and quotas in Redis (redis://HOST:PORT), shared by every replica using the same Redis; Redis unreachable: keyed requests get 503 until it answers again",
    usedBy: "start, keys",
  },
  {
    name: "TOME_AUTH",
    default: "on",
    meaning: '"off" serves every route without a key, for benchmarks and local use only',
    usedBy: "start",
  },
  {
    name: "TOME_KEY_MS_PER_SECOND",
    default: String(DEFAULT_KEY_MS_PER_SECOND),
    meaning: `milliseconds of the server's time (its request thread's and its search workers', less a worker's waits for a core) one key may use per second, on average (0: no limit; at most ${MAX_KEY_MS_PER_SECOND}, a second of the request thread and ${MAX_SEARCH_WORKERS} search workers); past it, 429 rate_limit_exceeded (D25, D101, D144)`,
    usedBy: "start",
  },
  {
    name: "TOME_SEARCH_TIMEOUT_MS",
    default: String(SEARCH_BUDGET_MS),
    meaning: `milliseconds a search may work; past it, it answers with the best it has found and says so (timedOut: true, D91). A search reads at least its first pages, so 0 answers every search from those alone, timed out (0 is not "no limit"). At most ${MAX_SEARCH_TIMEOUT_MS}: a connection that has no answer begun 10 s after its request is closed, so a longer limit would only let a search work on for an answer no client receives`,
    usedBy: "start",
  },
  {
    name: "TOME_SEARCH_WORKERS",
    default: "the number of cores, at most 64",
    meaning:
      "threads answering searches, lucky and the MCP search tools beside the one taking requests, 0 to 64 (0: all on that one thread; D101)",
    usedBy: "start",
  },
  {
    name: "TOME_SEARCH_WORKER_NICE",
    default: String(SEARCH_WORKER_NICE),
    meaning:
      "how many nice steps below the request thread the search threads and the PDF renderer's run, 0 to 19 (Linux): when searches or renders fill the cores, reading requests and the cheap routes still run at once (D142, D143)",
    usedBy: "start",
  },
  {
    name: "TOME_SHARED_DATA",
    default: "../shared/data beside the checkout, else test/fixtures/data",
    meaning: "where the dumps and eval sets for tests, benchmarks and leaks are (a folder holding dumps/ and eval/)",
    usedBy: "leaks, tests, benches",
  },
  {
    name: "TOME_ZSTD",
    default: "system",
    meaning: '"node": decompress text blocks with node:zlib rather than the system\'s libzstd',
    usedBy: "every command",
  },
  {
    name: "TOME_BUILD_WORKERS",
    default: "one per core, at most 64",
    meaning:
      "threads that parse the wikitext of a build, 1 to 64 (each holds about 17 MB; D113); the snapshot is the same bytes whatever their number (the snapshot commands' --workers overrides it)",
    usedBy: "snapshot:build, snapshot:update, snapshot:follow, start",
  },
  {
    name: "TOME_BUILD_NICE",
    default: String(BUILD_NICE),
    meaning:
      "how many nice steps a build, update or follow lowers its own process by, 0 to 19 (Linux): beside a serving Tome it leaves the cores to the searches when both want them (the README builds into snapshots/ while the server serves); alone, it runs as fast (D189)",
    usedBy: "snapshot:build, snapshot:update, snapshot:follow",
  },
  {
    name: "TOME_DEBUG_MEM",
    default: "off",
    meaning:
      'any value: log the build\'s memory phase by phase on stderr; "gc": collect first, so that the heap figures are what is live',
    usedBy: "snapshot:build, snapshot:update, snapshot:follow, start",
  },
] as const satisfies readonly Setting[];

type Name = (typeof SETTINGS)[number]["name"];

export interface Config {
  /** TOME_SNAPSHOT, or undefined: the newest in snapshots/. */
  snapshot: string | undefined;
  snapshotWatch: boolean;
  dump: string | undefined;
  host: string | undefined;
  port: string | undefined;
  dataDir: string;
  /** Whether TOME_DATA was given (messages then repeat it). */
  dataDirGiven: boolean;
  adminToken: string | undefined;
  /** TOME_PUBLIC_URL: an http(s) URL. */
  publicUrl: string | undefined;
  redisUrl: string | undefined;
  /** TOME_TRUSTED_PROXIES: IP addresses, as given. */
  trustedProxies: string[];
  auth: boolean;
  /** TOME_KEY_MS_PER_SECOND, or undefined for the default. */
  keyMsPerSecond: number | undefined;
  /** TOME_SEARCH_TIMEOUT_MS, or undefined for the default (SEARCH_BUDGET_MS, search's GUARDS.budgetMs). */
  searchTimeoutMs: number | undefined;
  /** TOME_SEARCH_WORKERS (default: the number of cores). */
  searchWorkers: number;
  /** TOME_SEARCH_WORKER_NICE (default 10). */
  searchWorkerNice: number;
  sharedData: string | undefined;
  zstd: "system" | "node";
  memoryLog: "off" | "on" | "gc";
  /** TOME_BUILD_WORKERS, or undefined: one per core. */
  buildWorkers: number | undefined;
  /** TOME_BUILD_NICE (default 10). */
  buildNice: number;
}

/** A setting that cannot be used: its message names it and what it takes (exit code 2). */
export class ConfigError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

type Env = Record<string, string | undefined>;

/**
 * Whether `path` is a "~" alone or starts with a folder part "~" or "~name" the shell left as it is (it expands one only
 * at a word's start, and not in quotes or an env file) (D187): the command would make a folder named "~" and write
 * there. A file "~x.tome" makes no such folder; one really named so is given as ./~… (a folder "~" found where the
 * command runs proves nothing: the bug itself left them).
 */
export function unexpandedTilde(path: string): boolean {
  return path === "~" || /^~[^/]*\//.test(path);
}

function oneOf<T extends string>(env: Env, name: Name, allowed: readonly T[], fallback: T): T {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(
    `${name} must be ${allowed.map((a) => `"${a}"`).join(" or ")} (the default is "${fallback}"), not "${printableName(value)}".`,
  );
}

/**
 * A setting that is a whole number from `min` (default 0) to `max`, or undefined when not given; anything else is
 * refused as "NAME must be a whole number of UNIT, MIN to MAX (NOTE), not "VALUE": WHY.".
 */
function wholeSetting(
  name: Name,
  value: string | undefined,
  { unit, min = 0, max, note, why }: { unit: string; min?: number; max: number; note?: string; why?: string },
): number | undefined {
  if (value === undefined) return undefined;
  if (/^[0-9]+$/.test(value) && Number(value) >= min && Number(value) <= max) return Number(value);
  throw new ConfigError(
    `${name} must be a whole number of ${unit}, ${min} to ${max}${note ? ` (${note})` : ""}, not "${printableName(value)}"${why ? `: ${why}` : ""}.`,
  );
}

/** Every setting, read and checked once. */
export function readConfig(env: Env = process.env): Config {
  const given = (name: Name) => (env[name] === "" ? undefined : env[name]);
  const share = wholeSetting("TOME_KEY_MS_PER_SECOND", given("TOME_KEY_MS_PER_SECOND"), {
    unit: "milliseconds",
    max: MAX_KEY_MS_PER_SECOND,
    note: "0: no limit",
    why: `a second holds at most ${MAX_KEY_MS_PER_SECOND} ms of the server's threads, its request thread's and ${MAX_SEARCH_WORKERS} search workers' (D25)`,
  });
  const timeout = wholeSetting("TOME_SEARCH_TIMEOUT_MS", given("TOME_SEARCH_TIMEOUT_MS"), {
    unit: "milliseconds",
    max: MAX_SEARCH_TIMEOUT_MS,
    why: "a connection with no answer begun 10 s after its request is closed (D91)",
  });
  const searchWorkers = wholeSetting("TOME_SEARCH_WORKERS", given("TOME_SEARCH_WORKERS"), {
    unit: "threads",
    max: MAX_SEARCH_WORKERS,
    note: "0: searches on the request thread",
  });
  const workerNice = wholeSetting("TOME_SEARCH_WORKER_NICE", given("TOME_SEARCH_WORKER_NICE"), {
    unit: "nice steps",
    max: LOWEST,
    note: "0: the search threads as the request thread",
  });
  const buildNice = wholeSetting("TOME_BUILD_NICE", given("TOME_BUILD_NICE"), {
    unit: "nice steps",
    max: LOWEST,
    note: "0: a build at the priority it was started at",
  });
  const adminToken = given("TOME_ADMIN_TOKEN");
  if (adminToken !== undefined && !/^[\x21-\x7e]{16,}$/.test(adminToken)) {
    throw new ConfigError(
      "TOME_ADMIN_TOKEN must be at least 16 printable ASCII characters with no spaces (e.g. from: openssl rand -hex 32).",
    );
  }
  const publicUrl = given("TOME_PUBLIC_URL");
  // Parsed as the dashboard parses it at start: "https://exa mple.com" or port 99999 passed the pattern, then threw there.
  if (publicUrl !== undefined && !(/^https?:\/\/[^\s/]+/.test(publicUrl) && URL.canParse(publicUrl))) {
    throw new ConfigError(
      `TOME_PUBLIC_URL must be where clients reach the server, as http(s)://HOST[:PORT], not "${printableName(publicUrl)}".`,
    );
  }
  // D170: only its origin is used, and Tome answers at the root (its pages link to /dashboard, its cookies have
  // Path=/dashboard): a prefix ("https://x.com/tome", a proxy serving Tome under a path) was kept silently and broke there.
  if (publicUrl !== undefined) {
    const u = new URL(publicUrl);
    if (u.pathname !== "/" || u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "") {
      throw new ConfigError(
        `TOME_PUBLIC_URL must be where clients reach the server, as http(s)://HOST[:PORT] and nothing more, not "${printableName(publicUrl)}": Tome answers at the root of its origin (its pages link to /dashboard, /v1/…), so it cannot be served under a path behind a proxy (D170).`,
      );
    }
  }
  const trustedProxies = (given("TOME_TRUSTED_PROXIES") ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  // IPv4 mapped into IPv6 (::ffff:10.0.0.2) is an IPv6 address to isIP; client-address.ts compares it as the IPv4 one.
  const notAddress = trustedProxies.find((a) => isIP(a) === 0);
  if (notAddress !== undefined) {
    throw new ConfigError(
      `TOME_TRUSTED_PROXIES must be IP addresses separated by commas (e.g. 127.0.0.1,10.0.0.2), not "${printableName(notAddress)}".`,
    );
  }
  const dump = given("TOME_DUMP");
  // An http(s) address is downloaded (start's downloadDump): one that is no URL threw a TypeError there, with its stack.
  if (dump !== undefined && /^https?:\/\//i.test(dump) && !URL.canParse(dump)) {
    throw new ConfigError(
      `TOME_DUMP must be simple, en, a dump file or an http(s) URL; "${printableName(dump)}" starts as a URL but is not one.`,
    );
  }
  const buildWorkers = wholeSetting("TOME_BUILD_WORKERS", given("TOME_BUILD_WORKERS"), {
    unit: "threads",
    min: 1,
    max: MAX_BUILD_WORKERS,
    note: "each holds about 17 MB",
  });
  const dataDir = given("TOME_DATA");
  if (dataDir !== undefined && unexpandedTilde(dataDir)) {
    throw new ConfigError(
      `TOME_DATA starts with "~", which the shell did not turn into a home folder (it does not in quotes or an env file), not "${printableName(dataDir)}": give the full path, or ./${printableName(dataDir)} for a folder really named so (D187).`,
    );
  }
  const debugMem = given("TOME_DEBUG_MEM");
  return {
    snapshot: given("TOME_SNAPSHOT"),
    snapshotWatch: oneOf(env, "TOME_SNAPSHOT_WATCH", ["on", "off"], "on") === "on",
    dump,
    host: given("HOST"),
    port: given("PORT"),
    dataDir: dataDir ?? DEFAULT_DATA_DIR,
    dataDirGiven: dataDir !== undefined,
    adminToken,
    publicUrl,
    redisUrl: given("TOME_REDIS_URL"),
    trustedProxies,
    auth: oneOf(env, "TOME_AUTH", ["on", "off"], "on") === "on",
    keyMsPerSecond: share,
    searchTimeoutMs: timeout,
    searchWorkers: searchWorkers ?? Math.min(availableParallelism(), MAX_SEARCH_WORKERS),
    searchWorkerNice: workerNice ?? SEARCH_WORKER_NICE,
    buildNice: buildNice ?? BUILD_NICE,
    sharedData: given("TOME_SHARED_DATA"),
    zstd: oneOf(env, "TOME_ZSTD", ["system", "node"], "system"),
    memoryLog: debugMem === undefined ? "off" : debugMem === "gc" ? "gc" : "on",
    buildWorkers,
  };
}

/** Whether a layer has been told a setting other than its default in this process (so must be told again). */
const told = { zstd: false, memoryLog: false, buildWorkers: false };

/**
 * Tells the library layers the settings they need (they never read the environment). A layer not loaded yet is loaded
 * only to be told a setting other than its default: until told, each holds the default (the system's zstd, no memory
 * log, one parsing worker per core), so that a command's --help and a mistaken argument load no engine. One told
 * otherwise before in this process (a command's main run again, as test/helpers.ts' keyTool runs keys') is told again.
 */
export async function applyConfig(config: Config): Promise<void> {
  if (config.zstd !== "system" || told.zstd) {
    told.zstd = true;
    (await import("../snapshot")).preferZstd(config.zstd);
  }
  if (config.memoryLog !== "off" || told.memoryLog) {
    told.memoryLog = true;
    (await import("../search")).setMemoryLog(config.memoryLog);
  }
  if (config.buildWorkers !== undefined || told.buildWorkers) {
    told.buildWorkers = true;
    (await import("../ingest")).setBuildWorkers(config.buildWorkers);
  }
}

/** Lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

/** The settings `names` for a command's --help: each name indented by two, its meaning and default beside or below it. */
export function settingsHelp(names: readonly Name[]): string {
  const out: string[] = [];
  for (const name of names) {
    const s = SETTINGS.find((x) => x.name === name)!;
    const text = wrap(`${s.meaning} (default: ${s.default})`, 78);
    if (name.length <= 14)
      out.push(`  ${name.padEnd(15)}${text[0]}`, ...text.slice(1).map((l) => `${" ".repeat(17)}${l}`));
    else out.push(`  ${name}`, ...text.map((l) => `${" ".repeat(17)}${l}`));
  }
  return `${out.join("\n")}\n`;
}

/** The settings a command reads (the README's "read by"), in the table's order: its --help lists them all. */
export function settingsReadBy(command: string): Name[] {
  return SETTINGS.filter((s) => s.usedBy.split(", ").some((user) => user === command || user === "every command")).map(
    (s) => s.name,
  );
}

/** The README's table of every setting. */
export function settingsTable(): string {
  const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("*", "\\*").replaceAll("<", "&lt;");
  return [
    "| setting | default | meaning | read by |",
    "| --- | --- | --- | --- |",
    ...SETTINGS.map((s) => `| \`${s.name}\` | ${cell(s.default)} | ${cell(s.meaning)} | ${s.usedBy} |`),
    "",
  ].join("\n");
}

if (import.meta.main) {
  if (Bun.argv.includes("--help"))
    console.log("bun src/cli/config.ts: prints the table of every setting (README.md's Configuration section)");
  else process.stdout.write(settingsTable());
}
