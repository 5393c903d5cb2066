/**
 * The key store in Redis, for the key tool (`bun run keys` with TOME_REDIS_URL): the same
 * KeyFile as keys.json, read whole and changed by compare-and-set (a change made from a stale
 * read is retried), so two key commands never lose each other's change. Replicas read no copy
 * of it: the admission script looks each key up, so a change holds from every replica's next
 * request. Also moves a store and this month's usage between TOME_DATA and Redis (`keys import`,
 * `keys export`).
 */
import { commandLine } from "../../invocation";
import { KeyStoreError } from "../errors";
import { nameTable } from "../names";
import { printableName } from "../../printable";
import { emptyKeyFile, type Account, type KeyFile, type KeyRecord } from "../store";
import type { UsageData } from "../usage";
import { HANDSHAKE_MS, NO_ANSWER, REFUSED, RedisConnection, RedisUnavailable } from "./connection";
import { IMPORT, NEVER_ENDS, READ_KEYS, SCRIPTS, WRITE_KEYS } from "./scripts";

/** tome:auth's entry for a key: when it stops working, its scope, account and id (what admission needs). */
function authEntry(record: KeyRecord): string {
  const ends = record.revoked_at ? 0 : record.expires_at ? Date.parse(record.expires_at) : NEVER_ENDS;
  return `${ends} ${record.scopes.includes("full") ? "full" : "read"} ${record.account} ${record.id}`;
}

/** Pairs from a flat HGETALL reply (Bun gives a RESP3 map as an object, a RESP2 array as a list). */
function pairs(reply: unknown): [string, string][] {
  if (Array.isArray(reply)) {
    const out: [string, string][] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) out.push([String(reply[i]), String(reply[i + 1])]);
    return out;
  }
  return Object.entries((reply ?? {}) as Record<string, string>);
}

/** How long the key tool waits for an answer to a command (a replica gives up after 2 s): the whole store is read in one. */
const KEY_TOOL_TIMEOUT_MS = 10_000;
/** And to an import: a large store's runs for seconds in one script, which Redis finishes whether or not the tool still waits for it. */
const IMPORT_TIMEOUT_MS = 60_000;

export class RedisKeyStore {
  private constructor(private readonly redis: RedisConnection) {}

  /** Over a connection that is already open (a replica's, for the dashboard); closing it is its owner's. */
  static on(redis: RedisConnection): RedisKeyStore {
    return new RedisKeyStore(redis);
  }

  /** Connects; an unreachable Redis is a KeyStoreError saying where it was looked for. */
  static async open(url: string): Promise<RedisKeyStore> {
    const redis = new RedisConnection(url, SCRIPTS, () => {}, KEY_TOOL_TIMEOUT_MS);
    await redis.open();
    if (redis.outage) {
      redis.close();
      if (redis.outage.reason === NO_ANSWER)
        throw new KeyStoreError(
          `Redis at ${redis.address} (TOME_REDIS_URL) did not answer within ${HANDSHAKE_MS / 1000} s. Check that the address is Redis's ` +
            `(\`redis-cli -u URL ping\` answers PONG; not another service on that port), that Redis is not stuck or paused, ` +
            `that a proxy or tunnel in between reaches it, and that a Redis with TLS is given as rediss:// (and one without as redis://). Nothing was changed.`,
        );
      if (redis.outage.reason.startsWith(REFUSED))
        throw new KeyStoreError(
          `Redis at ${redis.address} (TOME_REDIS_URL) ${redis.outage.reason.replace(/^Redis /, "")}. Nothing was changed.`,
        );
      throw new KeyStoreError(
        `cannot reach Redis at ${redis.address} (TOME_REDIS_URL): ${redis.outage.reason}. Check that Redis runs there and that the host and port are right. Nothing was changed.`,
      );
    }
    return new RedisKeyStore(redis);
  }

  get address(): string {
    return this.redis.address;
  }

  close(): void {
    this.redis.close();
  }

  private async run(s: typeof READ_KEYS, args: string[]): Promise<any> {
    try {
      return await this.redis.run(s, args);
    } catch (err) {
      if (err instanceof RedisUnavailable)
        throw new KeyStoreError(`Redis at ${this.address} failed: ${err.message}. Nothing more was changed.`);
      throw err;
    }
  }

  /** The whole store, and the version it is at. */
  async read(): Promise<{ version: string; file: KeyFile }> {
    const [version, keys, accounts] = (await this.run(READ_KEYS, [])) as [string, unknown, unknown];
    const file = emptyKeyFile();
    for (const [name, json] of pairs(accounts)) file.accounts[name] = JSON.parse(json) as Account;
    file.keys = pairs(keys)
      .map(([, json]) => JSON.parse(json) as KeyRecord)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    return { version: String(version), file };
  }

  /** Applies a change as updateKeyFile does for keys.json: read, change, write what changed, if no other change came between. */
  update<T>(change: (file: KeyFile) => T): Promise<T> {
    return this.change(() => this.read(), change);
  }

  /**
   * Applies a change to what `read` returns (the whole store, or the part of it the change is
   * about: the dashboard reads one account), writing what changed if the store is still at the
   * version read; else reads again and retries.
   */
  async change<T>(read: () => Promise<{ version: string; file: KeyFile }>, change: (file: KeyFile) => T): Promise<T> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const { version, file } = await read();
      const before = new Map(file.keys.map((k) => [k.id, JSON.stringify(k)]));
      const accountsBefore = new Map(Object.entries(file.accounts).map(([name, a]) => [name, JSON.stringify(a)]));
      const result = change(file);
      const keys = file.keys.filter((k) => before.get(k.id) !== JSON.stringify(k));
      const accounts = Object.entries(file.accounts).filter(
        ([name, a]) => accountsBefore.get(name) !== JSON.stringify(a),
      );
      const args = [version, String(keys.length)];
      for (const k of keys) args.push(k.id, k.hash, JSON.stringify(k), authEntry(k));
      for (const [name, a] of accounts) args.push(name, JSON.stringify(a));
      if ((await this.write(args)) !== -1) return result;
      await Bun.sleep(10 + Math.random() * 40);
    }
    throw new KeyStoreError("other key commands kept changing the store in Redis; nothing was changed. Try again.");
  }

  /** The change's script: sent, it may have been made even when no answer came back, and the message says so. */
  private async write(args: string[]): Promise<unknown> {
    try {
      return await this.redis.run(WRITE_KEYS, args);
    } catch (err) {
      if (!(err instanceof RedisUnavailable)) throw err;
      throw new KeyStoreError(
        `Redis at ${this.address} did not confirm the change (${err.message}): it is all or nothing, and may have been made; see with TOME_REDIS_URL=… ${commandLine("keys list")}.`,
      );
    }
  }

  /** A month's usage and the last use of every key, in usage.json's shape. */
  async usage(month: string): Promise<UsageData> {
    const spent = pairs(await this.redis.command("HGETALL", [`tome:spent:${month}`]).catch(this.unavailable));
    const lastUsed = pairs(await this.redis.command("HGETALL", ["tome:last_used"]).catch(this.unavailable));
    return {
      months: nameTable(spent.length ? [[month, nameTable(spent.map(([a, n]) => [a, Number(n)]))]] : []),
      last_used: nameTable(lastUsed.map(([id, ms]) => [id, new Date(Number(ms)).toISOString()])),
    };
  }

  private readonly unavailable = (err: unknown): never => {
    throw new KeyStoreError(`Redis at ${this.address} failed: ${(err as Error).message}.`);
  };

  /** Puts a whole store and one month's usage into a Redis that holds no key and no account yet (an account made for the dashboard would be overwritten); false if it holds some. */
  async importStore(file: KeyFile, usage: UsageData, month: string): Promise<boolean> {
    for (const k of file.keys) {
      if (!/^[0-9a-f]{64}$/.test(k.hash))
        throw new KeyStoreError(`key ${printableName(k.id)} has no sha256 hash; nothing was imported.`);
      // tome:auth's entry is split on spaces by the admission script.
      if (/\s/.test(k.id) || /\s/.test(k.account))
        throw new KeyStoreError(
          `key "${printableName(k.id)}" of account "${printableName(k.account)}" has a space in its id or its account's name, which Redis's entries cannot hold; rename it in keys.json. Nothing was imported.`,
        );
    }
    const lastUsed = Object.entries(usage.last_used).map(([id, iso]) => [id, Date.parse(iso)] as const);
    const unreadable = lastUsed.find(([, ms]) => !Number.isFinite(ms));
    if (unreadable)
      throw new KeyStoreError(
        `usage.json's last use of key ${printableName(unreadable[0])} is not a time ("${printableName(String(usage.last_used[unreadable[0]]))}"); correct or remove it. Nothing was imported.`,
      );
    const data = {
      keys: file.keys.map((k) => [k.id, k.hash, JSON.stringify(k), authEntry(k)]),
      accounts: Object.entries(file.accounts).map(([name, a]) => [name, JSON.stringify(a)]),
      month,
      spent: Object.entries(usage.months[month] ?? {}),
      last_used: lastUsed,
    };
    try {
      return (await this.redis.waitingUpTo(IMPORT_TIMEOUT_MS, () => this.run(IMPORT, [JSON.stringify(data)]))) !== -1;
    } catch (err) {
      if (!(err instanceof KeyStoreError)) throw err;
      throw new KeyStoreError(
        `Redis at ${this.address} did not confirm the import (${err.message.replace(/\. Nothing more was changed\.$/, "")}). ` +
          `It is all or nothing, and may have been made: see with TOME_REDIS_URL=… ${commandLine("keys list")}.`,
      );
    }
  }
}
