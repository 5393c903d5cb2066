/**
 * What the dashboard's pages show, worked out from one account (or one page of accounts) and the
 * month's usage: an account's keys with their use this month and its usage by day, and the
 * accounts for the operator. Pure: the handlers (account.ts, operator.ts) read the store.
 */
import { keysHeld, limitsOf, monthOf, stateOf, type Account, type KeyRecord, type UsageData } from "../../access";
import { KEYS_PER_PAGE, type AccountView, type KeyRow } from "./account-page";
import type { DayUse } from "./chart";
import type { AccountSummary } from "./operator-page";

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** The current UTC month at t: its usage, and what the pages say of it. */
export interface Month {
  t: number;
  /** "YYYY-MM". */
  name: string;
  usage: UsageData;
  today: number;
  days: number;
  monthName: string;
  /** When the quota starts again (ISO). */
  reset: string;
}

/** The name of t's UTC month ("November"). */
export const monthNameOf = (t: number) => MONTH_NAMES[new Date(t).getUTCMonth()]!;

export function monthAt(usage: UsageData, t: number): Month {
  const d = new Date(t);
  const [year, month] = [d.getUTCFullYear(), d.getUTCMonth()];
  return {
    t,
    name: monthOf(t),
    usage,
    today: d.getUTCDate(),
    days: new Date(Date.UTC(year, month + 1, 0)).getUTCDate(),
    monthName: MONTH_NAMES[month]!,
    reset: new Date(Date.UTC(year, month + 1, 1)).toISOString(),
  };
}

/** [requests, credits] of each key over the month's days. */
function useByKey(m: Month): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const keys of Object.values(m.usage.key_days ?? {})) {
    for (const [id, u] of Object.entries(keys)) {
      const total = out.get(id) ?? [0, 0];
      out.set(id, [total[0] + u[0], total[1] + u[1]]);
    }
  }
  return out;
}

/** The account's keys as its page lists them, with their use this month: active first, newest first, then by id. */
export function keyRowsOf(mine: readonly KeyRecord[], m: Month): KeyRow[] {
  const used = useByKey(m);
  return (
    mine
      .map((k) => {
        const [requests, credits] = used.get(k.id) ?? [0, 0];
        const scope = k.scopes.includes("full") ? ("full" as const) : ("read" as const);
        return {
          id: k.id,
          name: k.name,
          prefix: k.prefix ?? "",
          scope,
          created: k.created_at,
          expires: k.expires_at,
          lastUsed: m.usage.last_used[k.id] ?? null,
          state: stateOf(k, m.t),
          requests,
          credits,
        };
      })
      // Active keys first, newest first; keys made in the same millisecond by id, so that every page of the list
      // (D82) is cut from the same order, whatever order the store gives them in (a Redis set has none).
      .sort(
        (x, y) =>
          Number(x.state !== "active") - Number(y.state !== "active") ||
          y.created.localeCompare(x.created) ||
          (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
      )
  );
}

/**
 * An account's page, but for its session's CSRF token and what the request adds (a new key, a message): its keys from
 * the offset'th, KEYS_PER_PAGE of them (D82).
 */
export function accountViewOf(
  account: string,
  a: Account,
  mine: readonly KeyRecord[],
  m: Month,
  offset = 0,
): Omit<AccountView, "csrf" | "formId"> {
  const keys = keyRowsOf(mine, m).slice(offset, offset + KEYS_PER_PAGE);
  const ids = new Set(mine.map((k) => k.id));
  const days: DayUse[] = Array.from({ length: m.days }, (_, i) => {
    const keysOfDay = m.usage.key_days?.[`${m.name}-${String(i + 1).padStart(2, "0")}`] ?? {};
    let [requests, credits] = [0, 0];
    for (const [id, u] of Object.entries(keysOfDay))
      if (ids.has(id)) [requests, credits] = [requests + u[0], credits + u[1]];
    return { day: i + 1, requests, credits };
  });
  return {
    account,
    plan: a.plan,
    limits: limitsOf(a.plan, a.rate),
    activeKeys: keysHeld(mine, account, a, m.t).active,
    keys,
    offset,
    total: mine.length,
    spent: m.usage.months[m.name]?.[account] ?? 0,
    days,
    today: m.today,
    monthName: m.monthName,
    reset: m.reset,
    firstExpiry: new Date(m.t + 86_400_000).toISOString().slice(0, 10),
  };
}

/** Accounts for the operator, each with its keys: plan, active keys, credits this month (`spent`, in order), whether it has the dashboard. */
export function accountSummaries(
  accounts: readonly { name: string; account: Account; keys: readonly KeyRecord[] }[],
  spent: readonly number[],
  t: number,
): AccountSummary[] {
  return accounts.map(({ name, account: a, keys }, i) => ({
    name,
    plan: a.plan,
    activeKeys: keysHeld(keys, name, a, t).active,
    spent: spent[i] ?? 0,
    quota: limitsOf(a.plan, a.rate).quota,
    dashboard: Boolean(a.dashboard_token),
  }));
}
