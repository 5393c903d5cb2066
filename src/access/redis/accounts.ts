/**
 * The dashboard's AccountStore in Redis (accounts.ts), on a replica's own connection. Every read
 * is of one account (D81): the account by name (HGET tome:accounts), its keys through
 * tome:account_keys:NAME, its month's usage by the fields of its keys, and the operator's pages of
 * accounts through tome:account_names (scripts.ts). A change is the key tool's compare-and-set
 * made from that account's part of the store. Sessions are tome:session:SHA with their expiry,
 * at most SESSIONS_PER_ACCOUNT an account (PUT_SESSION); failed sign-ins tome:signin:NAME:WINDOW.
 * Any replica serves any session, and a revocation made on one is refused by all from their next
 * request.
 */
import { SESSIONS_PER_ACCOUNT, type AccountStore, type Session } from "../accounts";
import { KNOWN_ADDRESS_MS, SIGN_IN_WINDOW_MS } from "../sign-in-limits";
import { KeyStoreError } from "../errors";
import { nameTable } from "../names";
import { emptyKeyFile, type Account, type KeyRecord } from "../store";
import type { KeyDays, UsageData } from "../usage";
import type { WorkShare } from "../work";
import type { RedisConnection, Script } from "./connection";
import { ACCOUNT_USAGE, ACCOUNTS_AFTER, PUT_SESSION, READ_ACCOUNT } from "./account-scripts";
import { RedisKeyStore } from "./store";

const sessionsOf = (account: string) => `tome:account_sessions:${account || "@operator"}`;

export function redisAccountStore(redis: RedisConnection, work: WorkShare): AccountStore {
  const store = RedisKeyStore.on(redis);
  const unreachable = (err: Error): never => {
    throw new KeyStoreError(`the shared store (Redis) cannot be reached: ${err.message}`);
  };
  const command = (name: string, args: string[]): Promise<any> => redis.command(name, args).catch(unreachable);
  const run = (s: Script, args: string[]): Promise<any> => redis.run(s, args).catch(unreachable);
  /** One account and its keys, and the store's version they are at. */
  const readAccount = async (name: string) => {
    const [version, json, records] = (await run(READ_ACCOUNT, [name])) as [string, string, string[]];
    const account = json ? (JSON.parse(json) as Account) : undefined;
    const keys = (records ?? []).map((r) => JSON.parse(r) as KeyRecord);
    return { version: String(version), account, keys };
  };
  return {
    account: async (name) => {
      const json = await command("HGET", ["tome:accounts", name]);
      return json ? (JSON.parse(String(json)) as Account) : undefined;
    },
    keysOf: async (account) => (await readAccount(account)).keys,
    accountsAfter: async (after, limit) => {
      const [names, jsons, more] = (await run(ACCOUNTS_AFTER, [after, String(limit)])) as [string[], string[], number];
      return {
        accounts: (names ?? []).map((name, i) => [String(name), JSON.parse(String(jsons[i])) as Account]),
        more: Number(more) === 1,
      };
    },
    update: (name, change) =>
      store.change(async () => {
        const { version, account, keys } = await readAccount(name);
        // A table without a prototype, as every store's accounts (D89): the name may be any an old store holds.
        const file = emptyKeyFile();
        file.keys = keys;
        if (account) file.accounts[name] = account;
        return { version, file };
      }, change),
    usage: async (month, account, keyIds) => {
      const [year, m] = month.split("-").map(Number) as [number, number];
      const days = new Date(Date.UTC(year, m, 0)).getUTCDate();
      const [spent, lastUsed, byDay] = (await run(ACCOUNT_USAGE, [month, account, String(days), ...keyIds])) as [
        string,
        (string | null)[],
        (string | null)[][],
      ];
      const last_used = nameTable<string>();
      keyIds.forEach((id, i) => {
        const ms = lastUsed?.[i];
        if (ms) last_used[id] = new Date(Number(ms)).toISOString();
      });
      const key_days: KeyDays = nameTable();
      byDay?.forEach((counts, d) => {
        const day: KeyDays[string] = nameTable();
        keyIds.forEach((id, i) => {
          const [r, c] = [counts?.[2 * i], counts?.[2 * i + 1]];
          if (r || c) day[id] = [Number(r ?? 0), Number(c ?? 0)];
        });
        key_days[`${month}-${String(d + 1).padStart(2, "0")}`] = day;
      });
      const months = nameTable([[month, nameTable([[account, Number(spent)]])]]);
      return { months, last_used, key_days } satisfies UsageData;
    },
    spent: async (month, accounts) => {
      if (!accounts.length) return [];
      const replies = (await command("HMGET", [`tome:spent:${month}`, ...accounts])) as (string | null)[];
      return accounts.map((_, i) => Number(replies[i] ?? 0));
    },
    putSession: async (hash, session, now) => {
      const args = [hash, JSON.stringify(session), String(session.expires), sessionsOf(session.account), String(now)];
      await run(PUT_SESSION, [...args, String(SESSIONS_PER_ACCOUNT)]);
    },
    session: async (hash, now) => {
      const json = await command("GET", [`tome:session:${hash}`]);
      if (!json) return undefined;
      const session = JSON.parse(String(json)) as Session;
      return session.expires > now ? session : undefined;
    },
    dropSession: async (hash, account) => {
      await Promise.all([command("DEL", [`tome:session:${hash}`]), command("ZREM", [sessionsOf(account), hash])]);
    },
    failures: async (name, fail, now) => {
      const key = `tome:signin:${name}:${Math.floor(now / SIGN_IN_WINDOW_MS)}`;
      if (!fail) return Number((await command("GET", [key])) ?? 0);
      const count = Number(await command("INCR", [key]));
      if (count === 1) await command("PEXPIRE", [key, String(SIGN_IN_WINDOW_MS)]);
      return count;
    },
    remember: async (name) => {
      await command("SET", [`tome:signin:known:${name}`, "1", "PX", String(KNOWN_ADDRESS_MS)]);
    },
    known: async (name) => Number(await command("EXISTS", [`tome:signin:known:${name}`])) === 1,
    work,
  };
}
