/**
 * The key tool's commands (keys.ts reads which one, and answers its own --help): loaded once a command is named, so
 * that `keys --help` and an unknown command load no access layer.
 */
import { existsSync, rmSync } from "node:fs";
import {
  accountNameProblem,
  createAccountAccess,
  createKey,
  ENTERPRISE_DEFAULT_RATE,
  isPlan,
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
} from "../access";
import { lockHolderShown } from "../files";
import { printableJson, printableName } from "../printable";
import type { Config } from "./config";
import { given, readArgs } from "./args";
import { keyStoreOf, openRedis, type KeyToolStore } from "./key-store";
import { ArgumentError, type CommandIo, mainOf, note } from "./main";
import { commandLine } from "../invocation";

const HELP: Record<string, string> = {
  create: `Usage: ${commandLine("keys")} create --name NAME [--account ID] [--plan PLAN] [--scope read|full]
                           [--expires YYYY-MM-DD] [--json]

  --name NAME          a label for the key (required)
  --account ID         the account it belongs to (default: "default"); a new account is made
  --plan PLAN          a new account's plan: ${PLAN_NAMES.join(", ")} (default free);
                       an existing account keeps its plan (change it with "keys plan")
  --scope read|full    what the key may do: read, every route but the PDF render;
                       full, every route (default read)
  --expires DATE       the key stops working at 00:00 UTC on this date (a later day than today)
  --json               print {key, id, name, account, plan, scopes, expires_at, created_at}

The key is printed once: only its hash is kept. Keys per account: free 3, starter 5,
growth 10, business 20, enterprise unlimited (D21). A key made but never seen (the
command killed before it printed it, its output lost) still counts: find it in
"keys list" (its first characters are none you hold, last used never) and revoke it.
`,
  list: `Usage: ${commandLine("keys")} list [--json]

Every key: id, its first characters (wk_ and 4 more, to tell it from the keys you
hold), name, account, plan, scopes, state (active, revoked, expired), created, expires
and last used; then every account: its plan, its active keys against the plan's
(more after a move to a smaller plan), and its usage this month against its quota (credits are counted per account, not per key). The keys themselves are
never shown again. --json prints one object per key; its usage_this_month is its
account's.
`,
  revoke: `Usage: ${commandLine("keys")} revoke ID|KEY

Revokes the key with this id (see "keys list"), or the key given by its own text (wk_…,
matched by its hash; never printed). A running server refuses it (403) from its next
request on.
`,
  plan: `Usage: ${commandLine("keys")} plan --account ID --plan PLAN [--rate N]

  --plan PLAN   ${PLAN_NAMES.join(", ")}
  --rate N      enterprise only: requests per second per key (default ${ENTERPRISE_DEFAULT_RATE})

Takes effect on a running server's next request.
`,
  account: `Usage: ${commandLine("keys")} account create --account NAME [--plan PLAN] [--json]
       ${commandLine("keys")} account token --account NAME [--json]

The account holder signs in to the dashboard (/dashboard on the server) with a token: there
they list, create and revoke their own keys and see their usage. Each command prints the
token once (only its hash is kept); give it to the holder privately.

  create   makes the account if it is new (on --plan, default free) and prints its first
           sign-in token; refused for an account that has one (use "account token")
  token    prints a new token for an existing account: the old one, and every dashboard
           session signed in with it, stop working at once

  --account NAME   1 to 64 letters, digits, '.', '_' or '-'; not a name every JavaScript
                   object has, such as __proto__ or constructor (D89)
  --plan PLAN      ${PLAN_NAMES.join(", ")} (create only; an existing account keeps its plan)
  --json           print {"account", "plan", "dashboard_token"}
`,
  import: `Usage: TOME_REDIS_URL=redis://HOST:PORT TOME_DATA=DIR ${commandLine("keys")} import

Copies keys.json (every key and account) and this month's usage and last uses from
usage.json in TOME_DATA into Redis, for servers started with TOME_REDIS_URL. Refused when
Redis already holds keys or accounts, and while a server serves from TOME_DATA: stop the servers that
used it first. TOME_DATA is left as it was.
`,
  export: `Usage: TOME_REDIS_URL=redis://HOST:PORT TOME_DATA=DIR ${commandLine("keys")} export

Writes Redis's keys and accounts into TOME_DATA/keys.json, and this month's usage and last
uses into TOME_DATA/usage.json, for a single server without Redis. Refused when TOME_DATA
already holds a key store or usage. Redis is left as it was.
`,
};

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

async function create(args: string[], store: KeyToolStore, io: CommandIo): Promise<void> {
  const { values } = readArgs(args, {
    name: { type: "string" },
    account: { type: "string" },
    plan: { type: "string" },
    scope: { type: "string" },
    expires: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return void io.out(HELP.create!);
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

async function list(args: string[], store: KeyToolStore, io: CommandIo): Promise<void> {
  const { values } = readArgs(args, { json: { type: "boolean" } });
  if (values.help) return void io.out(HELP.list!);
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
  const time = (iso: string | null, never: string) => iso?.replace("T", " ").slice(0, 19) ?? never;
  const keyTable = [["ID", "KEY", "NAME", "ACCOUNT", "PLAN", "SCOPES", "STATE", "CREATED", "EXPIRES", "LAST USED"]];
  for (const r of rows) {
    keyTable.push([
      r.id,
      r.prefix ? `${r.prefix}…` : "—",
      r.name,
      r.account,
      r.plan,
      r.scopes.join(","),
      r.state,
      time(r.created_at, "-"),
      time(r.expires_at, "never"),
      time(r.last_used_at, "never"),
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

async function revoke(args: string[], store: KeyToolStore, io: CommandIo): Promise<void> {
  const { values, positionals } = readArgs(args, {}, 1);
  if (values.help) return void io.out(HELP.revoke!);
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

async function plan(args: string[], store: KeyToolStore, io: CommandIo): Promise<void> {
  const { values } = readArgs(args, {
    account: { type: "string" },
    plan: { type: "string" },
    rate: { type: "string" },
  });
  if (values.help) return void io.out(HELP.plan!);
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
async function importStore(args: string[], settings: Config, io: CommandIo): Promise<void> {
  const { values } = readArgs(args, {});
  if (values.help) return void io.out(HELP.import!);
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
async function exportStore(args: string[], settings: Config, io: CommandIo): Promise<void> {
  const { values } = readArgs(args, {});
  if (values.help) return void io.out(HELP.export!);
  const dir = settings.dataDir;
  if (existsSync(usagePath(dir)) && !existsSync(keysPath(dir)))
    throw new KeyStoreError(
      `${usagePath(dir)} exists without keys.json: an export into ${dir} may have been cut short. If so, delete it and run the export again; nothing was written.`,
    );
  for (const path of [keysPath(dir), usagePath(dir)]) {
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
async function account(args: string[], store: KeyToolStore, io: CommandIo): Promise<void> {
  const [which, ...rest] = args;
  if (which === "--help" || which === "-h") return void io.out(HELP.account!);
  if (which !== "create" && which !== "token")
    throw new ArgumentError(`keys account takes create or token${which === undefined ? "" : `, not ${given(which)}`}`);
  const { values } = readArgs(rest, {
    account: { type: "string" },
    plan: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return void io.out(HELP.account!);
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

const COMMANDS = {
  create,
  list,
  revoke,
  plan,
  account,
} satisfies Record<string, (args: string[], store: KeyToolStore, io: CommandIo) => Promise<void>>;
/** Commands that name both stores themselves. */
const MOVES = {
  import: importStore,
  export: exportStore,
} satisfies Record<string, (args: string[], settings: Config, io: CommandIo) => Promise<void>>;

/** The key tool's commands, by name: those of a store, then those that move one (they name both stores themselves). */
export type KeyCommand = keyof typeof COMMANDS | keyof typeof MOVES;

/** Runs `command` (one of KeyCommand: keys.ts checks) on its arguments, in `io`. */
export async function runKeys(command: KeyCommand, rest: string[], io: CommandIo): Promise<void> {
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command as keyof typeof COMMANDS] : undefined;
  const move = Object.hasOwn(MOVES, command) ? MOVES[command as keyof typeof MOVES] : undefined;
  let store: KeyToolStore | undefined;
  try {
    await mainOf(
      `keys ${command}`,
      (config) => {
        if (move) return move(rest, config, io);
        store = keyStoreOf(config);
        return run!(rest, store, io);
      },
      { usage: `\n${HELP[command]}`, io },
    );
  } finally {
    store?.close();
  }
}
