/**
 * One dashboard request as its handlers see it (a Visit), and the dashboard's settings they
 * share (a Site, made once). A visit times itself for the work share (D25, D57, D82): what it
 * awaits from outside the server's thread (a body arriving, Redis's answers) is not its work,
 * so its store is one whose waits are set apart.
 */
import type { Account, AccountStore, Session } from "../../access";
import { addressBlockFor, addressGroup, WindowCounts } from "../../access";
import { clientAddress, normalAddress } from "../client-address";
import type { Exchange } from "../pipeline";
import { secureOf } from "./cookies";

export interface DashboardOptions {
  accounts: AccountStore;
  /** TOME_ADMIN_TOKEN: signs in to the operator's view. */
  adminToken?: string;
  /** TOME_PUBLIC_URL: an https one makes every cookie Secure. */
  publicUrl?: string;
  /** TOME_TRUSTED_PROXIES: whose X-Forwarded-For tells the client's address (client-address.ts, D80). */
  trustedProxies?: string[];
  now?: () => number;
  /** The time the API counts usage at for a time of `now` (Gate.usageTime): the month shown is the month charged. */
  usageTime?: (now: number) => number;
}

/** Dashboard requests are counted in windows this long, per address and per session (D82). */
const REQUEST_WINDOW_MS = 10_000;

/** What every visit shares: the store, the operator's token's hash, the origins forms may come from, the counts. */
export interface Site {
  store: AccountStore;
  adminHash: string | undefined;
  publicUrl: URL | undefined;
  trusted: ReadonlySet<string>;
  now: () => number;
  usageTime: (now: number) => number;
  /** Requests per address and per session in the current window (limits.ts). */
  requests: WindowCounts;
}

export function siteOf(o: DashboardOptions, adminHash: string | undefined): Site {
  return {
    store: o.accounts,
    adminHash,
    publicUrl: o.publicUrl ? new URL(o.publicUrl) : undefined,
    trusted: new Set((o.trustedProxies ?? []).map(normalAddress)),
    now: o.now ?? Date.now,
    usageTime: o.usageTime ?? ((now) => now),
    requests: new WindowCounts(REQUEST_WINDOW_MS, 10_000, addressBlockFor),
  };
}

/** A signed-in session: the operator's (account ""), or an account's with the account as the store has it. */
export interface SignedIn {
  session: Session;
  /** sha256 of the session's cookie, the session's key in the store. */
  hash: string;
  account: Account | undefined;
}

export interface Visit {
  readonly request: Request;
  readonly path: string;
  readonly site: Site;
  /** The store, each wait for its answer set apart from this visit's work. */
  readonly store: AccountStore;
  /** The client's address as limits count it: IPv4, or an IPv6 address's /64 (D83). */
  readonly address: string;
  /** Whether the client reached us over https (D70's Secure rule). */
  readonly secure: boolean;
  readonly now: number;
  /** The route's parameters (index.ts), and the session once it is looked up. */
  params: Record<string, string>;
  signedIn: SignedIn | undefined;
  /** Awaits something outside the server's thread (a body arriving): the wait is not this visit's work. */
  outside<T>(pending: Promise<T>): Promise<T>;
  /** Milliseconds of the server's thread this visit has used so far. */
  worked(): number;
}

export function visitOf(site: Site, x: Exchange): Visit {
  const started = performance.now();
  let waited = 0;
  const outside = async <T>(pending: Promise<T>): Promise<T> => {
    const from = performance.now();
    try {
      return await pending;
    } finally {
      waited += performance.now() - from;
    }
  };
  const socket = x.server?.requestIP(x.request)?.address ?? "unknown";
  return {
    request: x.request,
    path: x.path,
    site,
    store: outsideWaits(site.store, outside),
    address: addressGroup(clientAddress(socket, x.request.headers.get("x-forwarded-for"), site.trusted)),
    secure: secureOf(x.request, site.publicUrl?.protocol === "https:"),
    now: site.now(),
    params: {},
    signedIn: undefined,
    outside,
    worked: () => performance.now() - started - waited,
  };
}

/** The store with each answer awaited through `outside`: what a call does on this thread is charged, its wait is not. */
function outsideWaits(store: AccountStore, outside: <T>(pending: Promise<T>) => Promise<T>): AccountStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const answer = value.apply(target, args);
        return answer instanceof Promise ? outside(answer) : answer;
      };
    },
  });
}
