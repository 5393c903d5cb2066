/**
 * bun run keys — the dashboard: API keys and plans, kept under TOME_DATA (default ./data).
 * Keys are never managed through the public API (api.md section 2.6). A running server
 * sees every change on its next request.
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import {
  createKey,
  DEFAULT_DATA_DIR,
  ENTERPRISE_DEFAULT_RATE,
  isPlan,
  KeyStoreError,
  keysPath,
  limitsOf,
  monthOf,
  PLAN_NAMES,
  readKeyFile,
  readUsage,
  revokeKey,
  SCOPES,
  setPlan,
  stateOf,
  updateKeyFile,
  UsageError,
  usagePath,
  type PlanName,
  type Scope,
} from "../access";

const HELP: Record<string, string> = {
  main: `Usage: bun run keys <command> [options]

Commands:
  create   create an API key (printed once)
  list     list keys, their state and their account's usage this month
  revoke   revoke a key: it stops working on the server's next request
  plan     change an account's plan

Run "bun run keys <command> --help" for a command's options.
Everything is kept under TOME_DATA (default ./${DEFAULT_DATA_DIR}).
`,
  create: `Usage: bun run keys create --name NAME [--account ID] [--plan PLAN] [--scope read|full]
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
growth 10, business 20, enterprise unlimited (D21).
`,
  list: `Usage: bun run keys list [--json]

Every key: id, name, account, plan, scopes, state (active, revoked, expired), created,
last used, and its account's usage this month. The keys themselves are never shown again.
`,
  revoke: `Usage: bun run keys revoke ID|KEY

Revokes the key with this id (see "keys list"), or the key given by its own text (wk_…,
matched by its hash; never printed). A running server refuses it (403) from its next
request on.
`,
  plan: `Usage: bun run keys plan --account ID --plan PLAN [--rate N]

  --plan PLAN   ${PLAN_NAMES.join(", ")}
  --rate N      enterprise only: requests per second per key (default ${ENTERPRISE_DEFAULT_RATE})

Takes effect on a running server's next request.
`,
};

class UsageMistake extends Error {}

const dataDir = () => process.env.TOME_DATA || DEFAULT_DATA_DIR;

const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

function parse<const O extends ParseArgsOptionsConfig>(args: string[], options: O, positionals = 0) {
  try {
    const parsed = parseArgs({ args, options: { ...options, ...HELP_OPTION }, allowPositionals: true, strict: true });
    if (parsed.positionals.length > positionals) throw new UsageMistake(`unexpected argument: ${parsed.positionals[positionals]}`);
    return parsed;
  } catch (err) {
    throw new UsageMistake((err as Error).message);
  }
}

function planArg(value: string | undefined): PlanName | undefined {
  if (value === undefined) return undefined;
  if (!isPlan(value)) throw new UsageMistake(`--plan must be one of ${PLAN_NAMES.join(", ")}, not "${value}"`);
  return value;
}

function expiryArg(value: string | undefined, now: number): string | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== value) throw new UsageMistake(`--expires must be a date as YYYY-MM-DD, not "${value}"`);
  if (ms <= now) {
    throw new UsageMistake(
      `--expires ${value} is not in the future: the key would stop working at 00:00 UTC that day, which has passed ` +
        `(it is now ${new Date(now).toISOString()}). Give a later date, or leave --expires out for a key that does not expire.`,
    );
  }
  return new Date(ms).toISOString();
}

function create(args: string[]): void {
  const { values } = parse(args, {
    name: { type: "string" },
    account: { type: "string" },
    plan: { type: "string" },
    scope: { type: "string" },
    expires: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return void process.stdout.write(HELP.create!);
  if (!values.name?.trim()) throw new UsageMistake("--name is required");
  const scope = (values.scope ?? "read") as Scope;
  if (!SCOPES.includes(scope)) throw new UsageMistake(`--scope must be read or full, not "${values.scope}"`);
  const account = values.account ?? "default";
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(account)) throw new UsageMistake("--account must be 1 to 64 letters, digits, '.', '_' or '-'");
  const plan = planArg(values.plan);
  const now = Date.now();
  const expiresAt = expiryArg(values.expires, now);
  const made = updateKeyFile(dataDir(), (file) => createKey(file, { name: values.name!.trim(), account, plan, scope, expiresAt, now }));
  const { key, record } = made;
  if (values.json) {
    const out = { key, id: record.id, name: record.name, account: record.account, plan: made.account.plan, scopes: record.scopes, expires_at: record.expires_at, created_at: record.created_at };
    console.log(JSON.stringify(out, null, 2));
    return;
  }
  console.log(key);
  console.error(
    `Created ${record.id} ("${record.name}") for account ${record.account} (${made.account.plan} plan, scope ${scope}` +
      `${record.expires_at ? `, expires ${record.expires_at}` : ""}). This is the only time the key is shown: keep it.`,
  );
}

function list(args: string[]): void {
  const { values } = parse(args, { json: { type: "boolean" } });
  if (values.help) return void process.stdout.write(HELP.list!);
  const file = readKeyFile(keysPath(dataDir()));
  const usage = readUsage(usagePath(dataDir()));
  const now = Date.now();
  const month = monthOf(now);
  const rows = file.keys.map((k) => {
    const account = file.accounts[k.account]!;
    const limits = limitsOf(account.plan, account.rate);
    return {
      id: k.id,
      name: k.name,
      account: k.account,
      plan: account.plan,
      scopes: k.scopes,
      state: stateOf(k, now),
      created_at: k.created_at,
      expires_at: k.expires_at,
      revoked_at: k.revoked_at,
      last_used_at: usage.last_used[k.id] ?? null,
      usage_this_month: usage.months[month]?.[k.account] ?? 0,
      quota: Number.isFinite(limits.quota) ? limits.quota : "unlimited",
      rate_per_second: limits.rate,
    };
  });
  if (values.json) return console.log(JSON.stringify(rows, null, 2));
  if (!rows.length) return console.log(`No keys in ${keysPath(dataDir())}. Create one with: bun run keys create --name NAME`);
  const table = [["ID", "NAME", "ACCOUNT", "PLAN", "SCOPES", "STATE", "CREATED", "LAST USED", `USAGE ${month}`]];
  for (const r of rows) {
    table.push([r.id, r.name, r.account, r.plan, r.scopes.join(","), r.state, r.created_at.slice(0, 10), r.last_used_at?.replace("T", " ").slice(0, 19) ?? "never", `${r.usage_this_month} / ${r.quota}`]);
  }
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
}

function revoke(args: string[]): void {
  const { values, positionals } = parse(args, {}, 1);
  if (values.help) return void process.stdout.write(HELP.revoke!);
  const idOrKey = positionals[0];
  if (!idOrKey) throw new UsageMistake("which key? bun run keys revoke ID|KEY (ids: bun run keys list)");
  const record = updateKeyFile(dataDir(), (file) => revokeKey(file, idOrKey, Date.now()));
  console.error(`Revoked ${record.id} ("${record.name}", account ${record.account}) at ${record.revoked_at}.`);
}

function plan(args: string[]): void {
  const { values } = parse(args, { account: { type: "string" }, plan: { type: "string" }, rate: { type: "string" } });
  if (values.help) return void process.stdout.write(HELP.plan!);
  if (!values.account) throw new UsageMistake("--account is required");
  const p = planArg(values.plan);
  if (!p) throw new UsageMistake("--plan is required");
  let rate: number | undefined;
  if (values.rate !== undefined) {
    rate = /^[0-9]+$/.test(values.rate) ? Number(values.rate) : NaN;
    if (!(rate >= 1 && rate <= 1_000_000)) throw new UsageMistake("--rate must be a whole number of requests per second from 1 to 1000000");
  }
  const a = updateKeyFile(dataDir(), (file) => setPlan(file, values.account!, p, rate));
  const limits = limitsOf(a.plan, a.rate);
  console.error(
    `Account ${values.account} is on the ${a.plan} plan: ${limits.rate} requests per second per key, ` +
      `${Number.isFinite(limits.quota) ? `${limits.quota} credits a month` : "unlimited credits"}.`,
  );
}

const COMMANDS: Record<string, (args: string[]) => void> = { create, list, revoke, plan };

if (import.meta.main) {
  const [command, ...rest] = Bun.argv.slice(2);
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP.main!);
    process.exit(command ? 0 : 2);
  }
  const run = COMMANDS[command];
  if (!run) {
    console.error(`keys: unknown command "${command}".\n\n${HELP.main}`);
    process.exit(2);
  }
  try {
    run(rest);
  } catch (err) {
    if (err instanceof UsageMistake) {
      console.error(`keys ${command}: ${err.message}\n\n${HELP[command]}`);
      process.exit(2);
    }
    if (err instanceof KeyStoreError || err instanceof UsageError) {
      console.error(`keys ${command}: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
