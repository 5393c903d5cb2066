/**
 * The key tool's commands (keys.ts reads which one and its options, and answers the --help of both): loaded once a
 * command's options are read, so that `keys --help`, `keys create --help`, an unknown command or option load no access layer.
 */
import { existsSync, rmSync } from "node:fs";
import {
  accountNameProblem,
  createAccountAccess,
  createKey,
  isPlan,
  journalFiles,
  KEY_NAME_MAX,
  KeyStoreError,
  keysHeld,
  keysPath,
  limitsOf,
  lockDataFolder,
  monthOf,
  PLAN_NAMES,
  readKeyFile,
  readUsage,
  type RedisKeyStore,
  replaceAccountToken,
  revokeKey,
  SCOPES,
  setPlan,
  stateOf,
  updateKeyFile,
  usagePath,
  writeUsage,
  type PlanName,
  type Scope,
  shownPrefix,
} from "../access";
import { lockHolderShown } from "../files";
import { printableJson, printableName } from "../printable";
import type { Config } from "./config";
import { given } from "./args";
import type { KeyArgs, KeyCommand } from "./key-options";
import { keyStoreOf, openRedis, type KeyToolStore } from "./key-store";
import { ArgumentError, type CommandIo, note } from "./main";
import { commandLine } from "../invocation";

function planArg(value: string | undefined): PlanName | undefined {
  if (value === undefined) return undefined;
  if (!isPlan(value)) throw new ArgumentError(`--plan must be one of ${PLAN_NAMES.join(", ")}, not ${given(value)}`);
  return value;
}

/** --account: a name an account may have (D89), else what it must be. */
function accountArg(value: string | undefined): string | undefined {
  const problem = value === undefined ? undefined : accountNameProblem(value);
  if (problem) throw new ArgumentError(`--account ${problem}`);
  return value;
}

function expiryArg(value: string | undefined, now: number): string | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== value)
    throw new ArgumentError(`--expires must be a date as YYYY-MM-DD, not ${given(value)}`);
  if (ms <= now) {
    throw new ArgumentError(
      `--expires ${value} is not in the future: the key would stop working at 00:00 UTC that day, which has passed ` +
        `(it is now ${new Date(now).toISOString()}). Give a later date, or leave --expires out for a key that does not expire.`,
    );
  }
  return new Date(ms).toISOString();
}

async function create({ values }: KeyArgs["create"], store: KeyToolStore, io: CommandIo): Promise<void> {
  if (values.name === undefined) throw new ArgumentError("--name is required");
  // Given, but "" or blanks (an empty variable: --name "$APP"): it said "--name is required".
  if (!values.name.trim())
    throw new ArgumentError(
      `--name is ${values.name ? "only blanks" : "empty"}: give the key a name of 1 to ${KEY_NAME_MAX} characters.`,
    );
  const scope = (values.scope ?? "read") as Scope;
  if (!SCOPES.includes(scope)) throw new ArgumentError(`--scope must be read or full, not ${given(scope)}`);
  const account = accountArg(values.account) ?? "default";
  const plan = planArg(values.plan);
  const now = Date.now();
  const expiresAt = expiryArg(values.expires, now);
  const made = await store.update((file) =>
    createKey(file, { name: values.name!.trim(), account, plan, scope, expiresAt, now }),
  );
  const { key, record } = made;
  if (values.json) {
    const out = {
      key,
      id: record.id,
      name: record.name,
      account: record.account,
      plan: made.account.plan,
      scopes: record.scopes,
      expires_at: record.expires_at,
      created_at: record.created_at,
    };
    io.log(printableJson(out));
    return;
  }
  io.log(key);
  note(
    `Created ${record.id} ("${record.name}") for account ${record.account} (${made.account.plan} plan, scope ${scope}` +
      `${record.expires_at ? `, expires ${record.expires_at}` : ""}) in ${printableName(store.where)}. This is the only time the key is shown: keep it.`,
    io,
  );
}

async function list({ values }: KeyArgs["list"], store: KeyToolStore, io: CommandIo): Promise<void> {
  const now = Date.now();
  const month = monthOf(now);
  const { file, usage } = await store.read(month);
  const rows = file.keys.map((k) => {
    const account = file.accounts[k.account]!;
    const limits = limitsOf(account.plan, account.rate);
    return {
      id: k.id,
      // The key's first characters (absent on keys made before they were kept): a key made but printed to no one (D196) is the one whose first characters nobody holds.
      prefix: k.prefix ?? null,
      name: k.name,
      account: k.account,
      plan: account.plan,
      scopes: k.scopes,
      state: stateOf(k, now),
      created_at: k.created_at,
      expires_at: k.expires_at,
      revoked_at: k.revoked_at,
      last_used_at: usage.last_used[k.id] ?? null,
      // The account's, not the key's (credits are counted per account).
      usage_this_month: usage.months[month]?.[k.account] ?? 0,
      quota: Number.isFinite(limits.quota) ? limits.quota : "unlimited",
      rate_per_second: limits.rate,
    };
  });
  if (values.json) return io.log(printableJson(rows));
  if (!rows.length)
    return io.log(
      `No keys in ${printableName(store.where)}. Create one with: ${commandLine("keys")} create --name NAME`,
    );
  const time = (iso: string) => iso.replace("T", " ").slice(0, 19);
  const timeOr = (iso: string | null) => (iso === null ? "never" : time(iso));
  const keyTable = [["ID", "KEY", "NAME", "ACCOUNT", "PLAN", "SCOPES", "STATE", "CREATED", "EXPIRES", "LAST USED"]];
  for (const r of rows) {
    keyTable.push([
      r.id,
      shownPrefix(r.prefix),
      r.name,
      r.account,
      r.plan,
      r.scopes.join(","),
      r.state,
      time(r.created_at),
      timeOr(r.expires_at),
      timeOr(r.last_used_at),
    ]);
  }
  // Credits are the account's (api.md section 8): one line per account, not repeated on each of its keys.
  const accountTable = [["ACCOUNT", "PLAN", "ACTIVE KEYS", `USAGE ${month}`, "RATE/S PER KEY"]];
  for (const [name, a] of Object.entries(file.accounts)) {
    const first = rows.find((r) => r.account === name);
    if (!first) continue;
    // Out of the plan's keys (D21), as usage is out of its quota: an account moved to a smaller plan may hold more.
    const { active, limit: keys } = keysHeld(file.keys, name, a, now);
    accountTable.push([
      name,
      a.plan,
      `${active} / ${Number.isFinite(keys) ? keys : "unlimited"}`,
      `${first.usage_this_month} / ${first.quota}`,
      String(first.rate_per_second),
    ]);
  }
  printTable(keyTable, io);
  io.log("");
  printTable(accountTable, io);
}

/** Rows in columns, every cell printable (ids, names and accounts come from a store that may have been edited by hand). */
function printTable(rows: string[][], io: CommandIo): void {
  const table = rows.map((row) => row.map(printableName));
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table)
    io.log(
      row
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    );
}

async function revoke({ positionals }: KeyArgs["revoke"], store: KeyToolStore, io: CommandIo): Promise<void> {
  // As pasted: blanks or a line break about the id or the key are no part of it.
  const idOrKey = positionals[0]?.trim();
  if (!idOrKey)
    throw new ArgumentError(`which key? ${commandLine("keys revoke ID|KEY")} (ids: ${commandLine("keys list")})`);
  const record = await store.update((file) => revokeKey(file, idOrKey, Date.now()));
  note(
    `Revoked ${printableName(record.id)} ("${printableName(record.name)}", account ${printableName(record.account)}) at ${record.revoked_at}, in ${printableName(store.where)}.`,
    io,
  );
}

async function plan({ values }: KeyArgs["plan"], store: KeyToolStore, io: CommandIo): Promise<void> {
  const account = accountArg(values.account);
  if (!account) throw new ArgumentError("--account is required");
  const p = planArg(values.plan);
  if (!p) throw new ArgumentError("--plan is required");
  let rate: number | undefined;
  if (values.rate !== undefined) {
    rate = /^[0-9]+$/.test(values.rate) ? Number(values.rate) : NaN;
    if (!(rate >= 1 && rate <= 1_000_000))
      throw new ArgumentError(
        `--rate must be a whole number of requests per second from 1 to 1000000, not ${given(values.rate)}`,
      );
  }
  const now = Date.now();
  const { a, held } = await store.update((file) => {
    const a = setPlan(file, account, p, rate);
    return { a, held: keysHeld(file.keys, account, a, now) };
  });
  const limits = limitsOf(a.plan, a.rate);
  note(
    `Account ${account} is on the ${a.plan} plan: ${limits.rate} requests per second per key, ` +
      `${Number.isFinite(limits.quota) ? `${limits.quota} credits a month` : "unlimited credits"} (in ${printableName(store.where)}).`,
    io,
  );
  // D21 refuses only a key made past the plan's number: those the account holds stay.
  if (held.active > held.limit)
    note(
      `It holds ${held.active} active keys, more than the ${held.limit} its ${a.plan} plan allows (D21): they keep working, ` +
        `but no key can be made for it until fewer than ${held.limit} are active. To keep within the plan, revoke ` +
        `${held.active - held.limit} (${commandLine("keys revoke ID")}; the ids: ${commandLine("keys list")}).`,
      io,
    );
}

/** TOME_DATA → Redis. */
async function importStore(_: KeyArgs["import"], settings: Config, io: CommandIo): Promise<void> {
  const dir = settings.dataDir;
  if (!existsSync(keysPath(dir)))
    throw new KeyStoreError(`${keysPath(dir)} does not exist: there is nothing to import (TOME_DATA is ${dir}).`);
  // A damaged store, then which Redis and whether it answers, before a server is told to stop for an import that could
  // not have run; the store is read again under the lock, as the server last wrote it.
  readKeyFile(keysPath(dir));
  const redis = await openRedis(settings.redisUrl);
  try {
    // A server on this folder keeps counting usage there after the import has read it: Redis would never get those credits.
    const unlock = lockDataFolder(
      dir,
      (pid, elsewhere) =>
        new KeyStoreError(
          `a Tome server ${lockHolderShown(pid, elsewhere)} serves from ${dir}: it keeps counting this month's usage there, which Redis would not get. Stop it first (it saves its counts as it stops), then import; nothing was imported.`,
        ),
    );
    try {
      await importFrom(dir, redis, io);
    } finally {
      unlock();
    }
  } finally {
    redis.close();
  }
}

async function importFrom(dir: string, redis: RedisKeyStore, io: CommandIo): Promise<void> {
  const file = readKeyFile(keysPath(dir));
  const usage = readUsage(usagePath(dir));
  const month = monthOf(Date.now());
  if (!(await redis.importStore(file, usage, month))) {
    throw new KeyStoreError(
      `Redis at ${redis.address} already holds keys or accounts; nothing was imported. Import only into a Redis that holds no Tome keys or accounts.`,
    );
  }
  const credits = Object.values(usage.months[month] ?? {}).reduce((a, b) => a + b, 0);
  note(
    `Imported ${file.keys.length} key(s) of ${Object.keys(file.accounts).length} account(s) and ${month}'s usage (${credits} credits) ` +
      `from ${dir} into Redis at ${redis.address}. Start the servers with TOME_REDIS_URL set; ${dir} is no longer read by them.`,
    io,
  );
}

/** Redis → TOME_DATA. */
async function exportStore(_: KeyArgs["export"], settings: Config, io: CommandIo): Promise<void> {
  const dir = settings.dataDir;
  if (existsSync(usagePath(dir)) && !existsSync(keysPath(dir)))
    throw new KeyStoreError(
      `${usagePath(dir)} exists without keys.json: an export into ${dir} may have been cut short. If so, delete it and run the export again; nothing was written.`,
    );
  // usage.json's journal (D20) too: a reader adds its credits to the usage exported.
  for (const path of [keysPath(dir), usagePath(dir), ...journalFiles(usagePath(dir))]) {
    if (existsSync(path))
      throw new KeyStoreError(
        `${path} already exists: export only into a TOME_DATA without a key store or usage; nothing was written.`,
      );
  }
  const month = monthOf(Date.now());
  const redis = await openRedis(settings.redisUrl);
  try {
    const { file } = await redis.read();
    // An empty store written here is refused by start ("holds no key") and by the next export ("already exists").
    if (!file.keys.length && !Object.keys(file.accounts).length)
      throw new KeyStoreError(
        `Redis at ${redis.address} holds no keys or accounts: there is nothing to export. Is TOME_REDIS_URL the Redis the servers use (its host, port and database number)? Nothing was written.`,
      );
    const usage = await redis.usage(month);
    // usage.json first, under keys.json's lock: an export cut short then leaves no keys.json, without which no server
    // starts there; keys.json alone would be served with this month's usage lost. Taken back only if this export wrote it.
    let wroteUsage = false;
    try {
      updateKeyFile(dir, (target) => {
        if (target.keys.length || existsSync(usagePath(dir)))
          throw new KeyStoreError(`${keysPath(dir)} or its usage.json appeared meanwhile; nothing was written.`);
        writeUsage(usagePath(dir), usage);
        wroteUsage = true;
        Object.assign(target, file);
      });
    } catch (err) {
      if (wroteUsage) rmSync(usagePath(dir), { force: true });
      throw err;
    }
    const credits = Object.values(usage.months[month] ?? {}).reduce((a, b) => a + b, 0);
    note(
      `Exported ${file.keys.length} key(s) of ${Object.keys(file.accounts).length} account(s) and ${month}'s usage (${credits} credits) ` +
        `from Redis at ${redis.address} into ${dir}. Start a server without TOME_REDIS_URL to serve from it.`,
      io,
    );
  } finally {
    redis.close();
  }
}

/** `keys account create|token`: an account holder's dashboard sign-in token (printed once). */
async function account({ which, values }: KeyArgs["account"], store: KeyToolStore, io: CommandIo): Promise<void> {
  const name = accountArg(values.account);
  if (!name) throw new ArgumentError("--account is required");
  if (which === "token" && values.plan !== undefined)
    throw new ArgumentError(
      `--plan is for account create; change a plan with: ${commandLine("keys plan --account NAME --plan PLAN")}`,
    );
  const plan = planArg(values.plan);
  const made = await store.update((file) =>
    which === "create" ? createAccountAccess(file, name, plan) : { created: false, ...replaceAccountToken(file, name) },
  );
  if (values.json)
    return io.log(printableJson({ account: name, plan: made.account.plan, dashboard_token: made.token }));
  io.log(made.token);
  const account = `account ${name} (${made.account.plan} plan)`;
  const what =
    which === "token"
      ? `A new dashboard sign-in token (the old one no longer works) for ${account}`
      : made.created
        ? `Created the ${account} and its dashboard sign-in token`
        : `The dashboard sign-in token for ${account}`;
  note(
    `${what}, in ${printableName(store.where)}. It is shown only this once: give it to the account holder, who signs in at /dashboard.`,
    io,
  );
}

/** A command on the key store the settings name, closed once it has run. */
function onStore<A>(
  run: (args: A, store: KeyToolStore, io: CommandIo) => Promise<void>,
): (args: A, settings: Config, io: CommandIo) => Promise<void> {
  return async (args, settings, io) => {
    const store = keyStoreOf(settings, (line) => note(line, io));
    try {
      await run(args, store, io);
    } finally {
      store.close();
    }
  };
}

/** Each command of keys.ts (its one list, READ, names them), on its options: import and export name both stores. */
const COMMANDS: { [C in KeyCommand]: (args: KeyArgs[C], settings: Config, io: CommandIo) => Promise<void> } = {
  create: onStore(create),
  list: onStore(list),
  revoke: onStore(revoke),
  plan: onStore(plan),
  account: onStore(account),
  import: importStore,
  export: exportStore,
};

/**
 * Runs `command` on its options, read by keys.ts (which answers its --help and its mistaken options without loading
 * this module, nor the access layer), with the settings read, in `io`.
 */
export async function runKeys<C extends KeyCommand>(
  command: C,
  args: KeyArgs[C],
  config: Config,
  io: CommandIo,
): Promise<void> {
  const run: (args: KeyArgs[C], settings: Config, io: CommandIo) => Promise<void> = COMMANDS[command];
  await run(args, config, io);
}
