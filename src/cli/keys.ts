/**
 * bun run keys — the dashboard: API keys and plans, kept under TOME_DATA (default ./data), or
 * in Redis when TOME_REDIS_URL is set (key-store.ts). Keys are never managed through the public
 * API (api.md section 2.6). A running server (every replica, with Redis) sees every change on
 * its next request. `import` and `export` move a store and this month's usage between the two.
 * The commands are keys-run.ts, loaded once one is named and its options read: `keys --help`, a command's --help, an
 * unknown command or option load no access layer.
 */
import { commandLine } from "../invocation";
import { printableName } from "../printable";
import { ENTERPRISE_DEFAULT_RATE, PLAN_NAMES } from "../plans";
import { DEFAULT_DATA_DIR } from "./config";
import { type KeyArgs, type KeyCommand, READ } from "./key-options";
import { type CommandIo, mainAfterOptions, PROCESS_IO } from "./main";

const HELP = `Usage: ${commandLine("keys")} <command> [options]

Commands:
  create   create an API key (printed once)
  list     list keys, their state and their account's usage this month
  revoke   revoke a key: it stops working on the server's next request
  plan     change an account's plan
  account  give an account holder the dashboard (/dashboard): "account create", "account token"
  import   move the keys and this month's usage from TOME_DATA into Redis (TOME_REDIS_URL)
  export   move the keys and this month's usage from Redis (TOME_REDIS_URL) into TOME_DATA

Run "${commandLine("keys")} <command> --help" for a command's options.
Everything is kept under TOME_DATA (default ./${DEFAULT_DATA_DIR}), or in Redis when
TOME_REDIS_URL is set (redis://HOST:PORT), as the server keeps it.
`;

/** Each command's --help. */
const COMMAND_HELP: Record<KeyCommand, string> = {
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

/** The command, on its arguments (what follows its name), in `io`: the process's environment and output unless told. */
export async function main(args: string[], io: CommandIo = PROCESS_IO): Promise<void> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    // Asked for, the help is the answer (stdout, 0); without a command, it is a usage error's (stderr, 2).
    (command ? io.out : io.err)(HELP);
    io.exit(command ? 0 : 2);
  }
  // Its own commands only: READ["toString"] ran Object's toString (exit 0, nothing done), "__proto__" threw (D89).
  if (!Object.hasOwn(READ, command)) {
    io.error(`keys: unknown command "${printableName(command)}".\n\n${HELP}`);
    io.exit(2);
  }
  const name = command as KeyCommand;
  // The keys commands use none of the layers applyConfig tells (snapshot, search, ingest): usesLayers false.
  await mainAfterOptions(
    `keys ${name}`,
    () => READ[name](rest),
    COMMAND_HELP[name],
    async (read, config) => (await import("./keys-run")).runKeys(name, read as KeyArgs[typeof name], config, io),
    { usage: `\n${COMMAND_HELP[name]}`, io, usesLayers: false },
  );
}

if (import.meta.main) await main(Bun.argv.slice(2));
