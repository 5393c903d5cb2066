/**
 * The dashboard's AccountStore in Redis (accounts.ts), on a replica's own connection: the key
 * store changed as the key tool changes it (RedisKeyStore, compare-and-set), sessions as
 * tome:session:SHA with their expiry, failed sign-ins as tome:signin:NAME:WINDOW, and the
 * month's usage from tome:spent, tome:last_used and tome:use (scripts.ts). Any replica serves
 * any session, and a revocation made on one is refused by all from their next request.
 */
import { SIGN_IN_WINDOW_MS, type AccountStore, type Session } from "../accounts";
import { KeyStoreError } from "../errors";
import { nameTable } from "../names";
import type { KeyDays, UsageData } from "../usage";
import { RedisKeyStore, pairs } from "./store";
import type { RedisConnection } from "./connection";

export function redisAccountStore(redis: RedisConnection): AccountStore {
  const store = RedisKeyStore.on(redis);
  const command = (name: string, args: string[]): Promise<any> =>
    redis.command(name, args).catch((err: Error) => {
      throw new KeyStoreError(`the shared store (Redis) cannot be reached: ${err.message}`);
    });
  return {
    read: async () => (await store.read()).file,
    update: (change) => store.update(change),
    usage: async (month) => {
      const usage = await store.usage(month);
      const days = Array.from({ length: 31 }, (_, i) => `${month}-${String(i + 1).padStart(2, "0")}`);
      const replies = await Promise.all(days.map((day) => command("HGETALL", [`tome:use:${day}`])));
      const key_days: KeyDays = nameTable();
      days.forEach((day, i) => {
        for (const [field, n] of pairs(replies[i])) {
          const at = field.lastIndexOf(":");
          const use = ((key_days[day] ??= nameTable())[field.slice(0, at)] ??= [0, 0]);
          use[field.slice(at + 1) === "r" ? 0 : 1] = Number(n);
        }
      });
      return { ...usage, key_days } satisfies UsageData;
    },
    putSession: async (hash, session) => {
      await command("SET", [`tome:session:${hash}`, JSON.stringify(session), "PXAT", String(session.expires)]);
    },
    session: async (hash, now) => {
      const json = await command("GET", [`tome:session:${hash}`]);
      if (!json) return undefined;
      const session = JSON.parse(String(json)) as Session;
      return session.expires > now ? session : undefined;
    },
    dropSession: async (hash) => {
      await command("DEL", [`tome:session:${hash}`]);
    },
    failures: async (name, fail, now) => {
      const key = `tome:signin:${name}:${Math.floor(now / SIGN_IN_WINDOW_MS)}`;
      if (!fail) return Number((await command("GET", [key])) ?? 0);
      const count = Number(await command("INCR", [key]));
      if (count === 1) await command("PEXPIRE", [key, String(SIGN_IN_WINDOW_MS)]);
      return count;
    },
  };
}
