/**
 * Where the key tool keeps keys: the files under TOME_DATA, or Redis when TOME_REDIS_URL is
 * set (as the server does). Both are read whole and changed under their own guard: keys.json
 * under its lock file, Redis by compare-and-set.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { type Config, ConfigError } from "./config";
import {
  checkRedisUrl,
  keysPath,
  redisAddress,
  RedisKeyStore,
  journalFiles,
  readKeyFile,
  readUsage,
  updateKeyFile,
  usagePath,
  writeUsage,
  KeyStoreError,
  type KeyFile,
  type UsageData,
} from "../access";
import { leadsNowhere, linkToNothing } from "../files";
import { printableName } from "../printable";

export interface KeyToolStore {
  /**
   * Where the keys are, for messages: keys.json's whole path (a key made from another folder than the server's lands in
   * another store, and the server answers it 403), or "Redis at redis://HOST:PORT/DB" (no user, password or query).
   */
  readonly where: string;
  /** Applies a change to the whole store; whatever it returns is returned. */
  update<T>(change: (file: KeyFile) => T): Promise<T>;
  /** The keys and the usage of `month`. */
  read(month: string): Promise<{ file: KeyFile; usage: UsageData }>;
  close(): void;
}

/** The Redis of TOME_REDIS_URL, or a KeyStoreError when it is unset, wrong or unreachable. */
export async function openRedis(url: string | undefined): Promise<RedisKeyStore> {
  if (!url)
    throw new KeyStoreError("TOME_REDIS_URL is not set: say which Redis, e.g. TOME_REDIS_URL=redis://127.0.0.1:6379.");
  const wrong = checkRedisUrl(url);
  // A setting that cannot be used, as start says it (exit 2), not a store that failed (1).
  if (wrong) throw new ConfigError(wrong);
  return RedisKeyStore.open(url);
}

/**
 * The store env names, opened on first use (a command's --help or a bad argument never waits on
 * Redis). With Redis, close() ends the connection. `warn` is told what a change made but could not finish (its
 * result is still returned, so a key made is shown).
 */
export function keyStoreOf(
  config: Pick<Config, "dataDir" | "redisUrl">,
  warn: (line: string) => void = () => {},
): KeyToolStore {
  const url = config.redisUrl;
  if (url) {
    let redis: Promise<RedisKeyStore> | undefined;
    const open = () => (redis ??= openRedis(url));
    return {
      where: `Redis at ${redisAddress(url)}`,
      update: async (change) => (await open()).update(change),
      read: async (month) => {
        const r = await open();
        return { file: (await r.read()).file, usage: await r.usage(month) };
      },
      close: () =>
        void redis?.then(
          (r) => r.close(),
          () => {},
        ),
    };
  }
  const dataDir = config.dataDir;
  return {
    where: resolve(keysPath(dataDir)),
    update: async (change) => {
      const usage = usagePath(dataDir);
      const fresh = !existsSync(keysPath(dataDir)) && !existsSync(usage) && !journalFiles(usage).length;
      // Its usage.json cannot be made through a link to a folder not there: refused before keys.json is written (the key
      // was saved, then the write below failed, and the key was never shown).
      const nowhere = fresh ? linkToNothing(usage) : undefined;
      if (nowhere !== undefined)
        throw new KeyStoreError(
          `${leadsNowhere(usage, nowhere)}, so the new store's usage cannot be kept. Mount what it leads to (or remove the link) and try again; nothing was changed.`,
        );
      const result = updateKeyFile(dataDir, change);
      // A new store gets its usage.json (empty) beside it, as `keys export` writes one: a start that later finds none
      // says the counts were lost (D20), and the first start after `keys create` has nothing to say. After keys.json: a
      // usage.json alone would be taken for a store's trace, and refuse the start.
      if (fresh) {
        try {
          writeUsage(usage, { months: {}, last_used: {} });
        } catch (err) {
          // The change is made (a key saved): what it made is still shown, and this said beside it.
          warn(
            `WARNING: the key was made in ${printableName(keysPath(dataDir))}, but ${printableName(usage)} could not be written (${(err as Error).message}). ` +
              `Make it a file this user can write before a server starts on this store; the key works once it starts.`,
          );
        }
      }
      return result;
    },
    read: async () => {
      // keys.json under a file (TOME_DATA=data/keys.json) is not found, as under a folder not made yet: said as a change says it.
      if (statSync(dataDir, { throwIfNoEntry: false })?.isDirectory() === false) statSync(keysPath(dataDir));
      return { file: readKeyFile(keysPath(dataDir)), usage: readUsage(usagePath(dataDir)) };
    },
    close: () => {},
  };
}
