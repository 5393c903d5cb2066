/**
 * A replica's connection to Redis (TOME_REDIS_URL), through Bun's built-in client, made to fail
 * closed and fast: commands are never queued while the connection is down, a command that
 * fails or takes longer than COMMAND_TIMEOUT_MS marks Redis unreachable, and from then on every
 * command fails at once (requests get 503, none waits on a dead socket) until a probe (a PING
 * every PROBE_MS) is answered. Scripts run by EVALSHA, loaded with SCRIPT LOAD on each connect;
 * a Redis that restarted without them answers NOSCRIPT, and the script is then sent whole (EVAL).
 */
import { RedisClient } from "bun";
import { createHash } from "node:crypto";

/** Longer than any healthy Redis takes (a fork or an fsync stall included); then Redis counts as unreachable. */
const COMMAND_TIMEOUT_MS = 2000;
/**
 * How long connecting, a PING and loading the scripts may take, at open and in each probe, before Redis counts as
 * unreachable: a server that takes the connection and answers nothing (another service on the port, a Redis stopped
 * behind a proxy) kept the key tool and a starting server waiting for good.
 */
export const HANDSHAKE_MS = 3000;
/** Bun's own bound on connecting, a backstop past HANDSHAKE_MS (under it, a silent server read as "Connection closed"). */
const CONNECT_TIMEOUT_MS = 2 * HANDSHAKE_MS;
const PROBE_MS = 250;
/** The reason a handshake not answered in time gives (the key tool's message tells it from a refused connection by it). */
export const NO_ANSWER = `no answer within ${HANDSHAKE_MS / 1000} s`;

/** Redis could not be reached, or did not answer in time: the request is refused (503), never let through. */
export class RedisUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedisUnavailable";
  }
}

/** A Lua script and its SHA-1, as EVALSHA names it. */
export interface Script {
  readonly name: string;
  readonly text: string;
  readonly sha: string;
}

export function script(name: string, text: string): Script {
  return { name, text, sha: createHash("sha1").update(text).digest("hex") };
}

/**
 * Where Redis is, for messages: the URL without its user, its password, its query or its fragment (several clients
 * read a password from `?password=`, and a log or a message must never show one).
 */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.username = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(a URL that cannot be read)";
  }
}

/** Checks TOME_REDIS_URL's shape (redis:// or rediss://, or a unix socket) before any connection is tried. */
export function checkRedisUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `TOME_REDIS_URL is not a URL: give it as redis://HOST:PORT (or rediss:// for TLS, redis+unix:///path/to/socket).`;
  }
  if (
    !["redis:", "rediss:", "valkey:", "valkeys:", "redis+unix:", "redis+tls+unix:", "valkey+unix:"].includes(u.protocol)
  ) {
    return `TOME_REDIS_URL must start with redis:// or rediss:// (or redis+unix://), not ${u.protocol}//.`;
  }
  // "redis://" (a host left out, or a variable empty in redis://${HOST}:6379) was taken: the server then served 503 to every
  // keyed request, saying Redis was unreachable ("Expected either "hostname" or "unix"").
  if (!u.protocol.includes("unix") && !u.hostname)
    return `TOME_REDIS_URL names no host: give it as redis://HOST:PORT, e.g. redis://127.0.0.1:6379.`;
  // Bun's client reads the rest (a database number that is not one) when it is made, which connects nothing.
  try {
    new RedisClient(url, { autoReconnect: false }).close();
  } catch (err) {
    return `TOME_REDIS_URL cannot be used (${withoutSecrets((err as Error).message, u)}): give it as redis://[:PASSWORD@]HOST:PORT[/DATABASE NUMBER].`;
  }
  return undefined;
}

/** `text` with the URL's user and password (as written, and decoded) left out. */
function withoutSecrets(text: string, u: URL): string {
  let out = text;
  for (const secret of [u.password, u.username])
    for (const form of new Set([secret, decodeURIComponentSafe(secret)])) if (form) out = out.replaceAll(form, "…");
  return out;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export const REFUSED = "Redis refused the connection";

/**
 * Why Redis refuses a connection opened as Bun's client opens it (AUTH with the URL's user and password, then SELECT
 * of its database), on a socket of its own; undefined when it does not say (it cannot be reached, or accepts it).
 */
async function openingRefusal(url: string): Promise<string | undefined> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const bulk = (parts: string[]) =>
    `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join("")}`;
  const user = decodeURIComponentSafe(u.username);
  const password = decodeURIComponentSafe(u.password);
  const commands = [password ? (user ? ["AUTH", user, password] : ["AUTH", password]) : ["PING"]];
  const unix = u.protocol.includes("unix");
  const database = unix ? u.searchParams.get("db") : u.pathname.slice(1);
  if (database) commands.push(["SELECT", database]);
  let text = "";
  const replies = await new Promise<string[] | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 1000);
    const done = (lines: string[] | undefined) => {
      clearTimeout(timer);
      resolve(lines);
    };
    const handlers = {
      open: (socket: { write(data: string): number }) => void socket.write(commands.map(bulk).join("")),
      data: (socket: { end(): void }, data: Buffer) => {
        text += data.toString();
        const lines = text.split("\r\n").slice(0, -1);
        if (lines.length >= commands.length || lines.some((l) => l.startsWith("-"))) {
          done(lines);
          socket.end();
        }
      },
      close: () => done(undefined),
      error: () => done(undefined),
      connectError: () => done(undefined),
    };
    const tls = u.protocol === "rediss:" || u.protocol === "valkeys:" || u.protocol.includes("tls");
    const connecting = unix
      ? Bun.connect({ unix: decodeURIComponentSafe(u.pathname), tls, socket: handlers })
      : Bun.connect({
          hostname: u.hostname.replace(/^\[|\]$/g, ""),
          port: Number(u.port || 6379),
          tls,
          socket: handlers,
        });
    connecting.catch(() => done(undefined));
  });
  const refusal = replies?.find((line) => line.startsWith("-"))?.slice(1);
  if (!refusal) return undefined;
  const what = /^(WRONGPASS|NOAUTH)/.test(refusal)
    ? "check the user and password TOME_REDIS_URL gives (redis://[USER]:PASSWORD@HOST:PORT)"
    : /DB index/.test(refusal)
      ? "the database number TOME_REDIS_URL names (after the port) is not one this Redis has"
      : "see Redis's log";
  return `${REFUSED} (${withoutSecrets(refusal, u)}): ${what}`;
}

/** Replies of a Redis that answers but cannot serve: an outage, not one command's refusal (RedisConnection.failed). */
const CANNOT_SERVE = /^(MISCONF|OOM|READONLY|LOADING|BUSY|MASTERDOWN)/;

/** What each of those replies says, in Tome's words. */
const CANNOT_SERVE_SAID: Record<string, string> = {
  MISCONF: "it answers but cannot save its data to disk (MISCONF)",
  OOM: "it answers but is out of memory (OOM: maxmemory reached under noeviction)",
  READONLY: "it answers but is a read-only replica (READONLY): TOME_REDIS_URL must name the primary",
  LOADING: "it answers but is still loading its data (LOADING)",
  BUSY: "it answers but is busy running a script (BUSY)",
  MASTERDOWN: "it answers but is a replica that lost its primary (MASTERDOWN)",
};

/**
 * Why Redis is unreachable, as /healthz says it to anyone who asks: one of a few fixed sentences chosen by the
 * outage's reason, never the reason's text (what Redis, a proxy in front of it or Bun's client said may name a host,
 * an internal address or a user, and is the operator's: the server's log has it whole).
 */
export function outageSaid(reason: string): string {
  if (reason.startsWith(REFUSED)) {
    if (/^Redis refused the connection \((WRONGPASS|NOAUTH)/.test(reason))
      return "it refused the user or password TOME_REDIS_URL gives";
    if (/^Redis refused the connection \([^)]*DB index/.test(reason))
      return "it has no database of the number TOME_REDIS_URL names";
    return "it refused the connection";
  }
  const code = CANNOT_SERVE.exec(reason)?.[1];
  if (code) return CANNOT_SERVE_SAID[code]!;
  if (reason.startsWith("no answer within")) return "it did not answer in time";
  return "the connection to it failed or closed";
}

export interface Outage {
  /** When Redis was first found unreachable (ms since the epoch). */
  since: number;
  /** The same moment on the monotonic clock (performance.now()), for how long it lasted: a date's difference is not one (D200). */
  began: number;
  reason: string;
}

export class RedisConnection {
  private client: RedisClient;
  private readonly scripts: Script[];
  /** Set while Redis is unreachable: commands fail at once until a probe is answered. */
  outage: Outage | undefined;
  /** Called when a probe ends an outage, before any command is sent after it. */
  onAnswering: (() => void) | undefined;
  private probe: ReturnType<typeof setInterval> | undefined;
  private probing = false;
  private handshaking = false;
  private closed = false;
  /** Commands sent and not yet answered, and when Redis last answered one (or was first waited on). */
  private pending = 0;
  private progressAt = 0;
  /**
   * Redis answers in order: while commands wait, it must answer one every COMMAND_TIMEOUT_MS.
   * One timer for all commands (a timer each costs more than the rest of a command): a Redis
   * that stalls has its connection closed, which fails every command waiting on it.
   */
  private readonly watchdog: ReturnType<typeof setInterval>;

  constructor(
    readonly url: string,
    scripts: Script[],
    private readonly log: (line: string) => void = (line) => console.error(line),
    private commandTimeoutMs = COMMAND_TIMEOUT_MS,
  ) {
    this.scripts = scripts;
    this.client = this.newClient();
    this.watchdog = setInterval(() => {
      if (this.pending > 0 && performance.now() - this.progressAt > this.commandTimeoutMs) {
        this.fail(`no answer within ${this.commandTimeoutMs} ms`);
        this.client.close();
      }
    }, PROBE_MS);
    this.watchdog.unref();
  }

  /** A client that never queues a command while disconnected; the probe reconnects (Bun's own reconnection keeps connect() waiting while Redis is down). */
  private newClient(): RedisClient {
    const client = new RedisClient(this.url, {
      enableOfflineQueue: false,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      autoReconnect: false,
    });
    client.onconnect = () => void this.loadScripts();
    client.onclose = (error) => {
      // In a handshake, its own failure says why (the close alone would say "Connection closed" first).
      if (!this.closed && !this.handshaking && client === this.client)
        this.fail(`the connection closed (${error?.message ?? "no reason given"})`);
    };
    return client;
  }

  get address(): string {
    return redisAddress(this.url);
  }

  /** Connects; a Redis that cannot be reached yet, or does not answer, is an outage (probed until it answers), not an error. */
  async open(): Promise<void> {
    try {
      await this.answering(this.client);
    } catch (err) {
      this.fail((err as Error).message);
      // A connection that answered nothing: the commands waiting on it fail, and the probe connects anew.
      this.client.close();
    }
  }

  /** Connects `client` if need be, PINGs (and writes, if asked) and loads the scripts; rejects unless Redis has answered within HANDSHAKE_MS. */
  private async answering(client: RedisClient, write = false): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(NO_ANSWER)), HANDSHAKE_MS);
    });
    const greeted = (async () => {
      try {
        if (!client.connected) await client.connect();
      } catch (err) {
        // Bun's client says only "Connection closed" when Redis refuses its opening (a wrong password, none given,
        // a database that is not one): ask Redis why, on a connection of our own.
        throw new Error((await openingRefusal(this.url)) ?? (err as Error).message);
      }
      await client.send("PING", []);
      // A probe also writes: a Redis out of memory, unable to persist or made a read-only replica answers PING
      // and refuses every request's script, and service would flap back for each probe.
      if (write) await client.send("SET", ["tome:probe", "1", "PX", "10000"]);
      await this.loadScripts();
    })();
    this.handshaking = true;
    try {
      await Promise.race([greeted, silent]);
    } finally {
      this.handshaking = false;
      clearTimeout(timer);
    }
  }

  /** Runs `work` with commands allowed `ms` to answer rather than the connection's timeout (an import's one long script). */
  async waitingUpTo<T>(ms: number, work: () => Promise<T>): Promise<T> {
    const before = this.commandTimeoutMs;
    this.commandTimeoutMs = ms;
    try {
      return await work();
    } finally {
      this.commandTimeoutMs = before;
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.probe);
    clearInterval(this.watchdog);
    this.probe = undefined;
    this.client.close();
  }

  /**
   * Runs a script: EVALSHA, or EVAL when Redis lacks it. Rejects with RedisUnavailable when
   * Redis cannot answer. (Promise chains, not async functions: this runs twice per request.)
   */
  run(s: Script, args: string[]): Promise<any> {
    if (this.outage) return Promise.reject(this.unreachable());
    this.sent();
    return this.client.send("EVALSHA", [s.sha, "0", ...args]).then(this.answered, (err: Error) => {
      if (!String(err?.message).startsWith("NOSCRIPT")) return this.failed(err);
      this.answered(undefined);
      return this.command("EVAL", [s.text, "0", ...args]);
    });
  }

  /**
   * Sends a command. A reply that is a Redis error rejects as RedisUnavailable too: a Redis
   * that cannot persist (MISCONF) or is out of memory must refuse traffic as a dead one does.
   */
  command(name: string, args: string[]): Promise<any> {
    if (this.outage) return Promise.reject(this.unreachable());
    this.sent();
    return this.client.send(name, args).then(this.answered, this.failed);
  }

  private unreachable(): RedisUnavailable {
    return new RedisUnavailable(`Redis at ${this.address} is unreachable: ${this.outage?.reason}`);
  }

  private sent(): void {
    if (this.pending++ === 0) this.progressAt = performance.now();
  }

  private readonly answered = <T>(reply: T): T => {
    this.pending--;
    this.progressAt = performance.now();
    return reply;
  };

  private readonly failed = (err: unknown): never => {
    this.answered(undefined);
    const message = (err as Error)?.message ?? String(err);
    // An error reply from a Redis that works refuses this command only (503, logged); one
    // saying Redis cannot serve (cannot persist, out of memory, a read-only replica, loading
    // or busy) and a lost connection make it unreachable until a probe is answered.
    const serverError = (err as { code?: string })?.code === "ERR_REDIS_SERVER_ERROR";
    if (serverError && !CANNOT_SERVE.test(message)) this.log(`Redis at ${this.address} refused a command: ${message}`);
    else this.fail(message);
    throw new RedisUnavailable(message);
  };

  private async loadScripts(): Promise<void> {
    try {
      for (const s of this.scripts) await this.client.send("SCRIPT", ["LOAD", s.text]);
    } catch {
      // EVALSHA falls back to EVAL; a Redis that is gone again is found by the next command.
    }
  }

  /** Marks Redis unreachable (logged once per outage) and probes until it answers. */
  private fail(reason: string): void {
    if (this.closed) return;
    if (!this.outage) {
      this.outage = { since: Date.now(), began: performance.now(), reason };
      this.log(
        `Redis at ${this.address} is unreachable (${reason}): requests that need a key get 503 until it answers again.`,
      );
    }
    this.probe ??= setInterval(() => void this.probeOnce(), PROBE_MS);
  }

  /** Reconnects if need be (on a new client: a stalled one was closed), then PINGs; success ends the outage. */
  private async probeOnce(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    try {
      if (!this.client.connected) {
        this.client.close();
        this.client = this.newClient();
      }
      try {
        await this.answering(this.client, true);
      } catch (err) {
        // One that answered nothing is let go: the next probe connects anew, rather than PING it again.
        this.client.close();
        const reason = (err as Error).message;
        // A refusal found only now (Redis restarted with another password) is said once, as the outage was.
        if (this.outage && reason !== this.outage.reason && reason.startsWith(REFUSED)) {
          this.outage.reason = reason;
          this.log(`Redis at ${this.address} is still unreachable: ${reason}.`);
        }
        throw err;
      }
      const down = this.outage ? ((performance.now() - this.outage.began) / 1000).toFixed(1) : "0";
      this.outage = undefined;
      clearInterval(this.probe);
      this.probe = undefined;
      this.onAnswering?.();
      this.log(`Redis at ${this.address} answers again (after ${down} s): serving keyed requests.`);
    } catch {
      // Still down: the next probe tries again.
    } finally {
      this.probing = false;
    }
  }
}
