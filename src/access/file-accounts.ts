/**
 * The dashboard's AccountStore on one server without Redis (accounts.ts): accounts and keys from
 * the server's key ring, sessions and failed sign-ins in memory, usage from its own ledger.
 */
import { MAX_SESSIONS, SESSIONS_PER_ACCOUNT, type AccountStore, type Session } from "./accounts";
import type { KeyRing } from "./ring";
import { KeyStoreError, KeyStoreLocked, KeyStoreUnwritable } from "./errors";
import { updateKeyFileAsync } from "./store";
import type { UsageLedger } from "./usage";
import { MemorySignIns } from "./sign-in-limits";
import type { WorkShare } from "./work";

/**
 * Sessions kept in memory: what one server without Redis needs (a restart signs everyone out). Bounded (D82): SESSIONS_PER_ACCOUNT per account and MAX_SESSIONS in all,
 * the oldest ending first, found without a scan (a Map keeps its insertion order, and every
 * session lasts SESSION_MS, so the first one made is the first to end).
 */
class MemorySessions {
  private readonly sessions = new Map<string, Session>();
  /** Each account's sessions' hashes, oldest first. */
  private readonly byAccount = new Map<string, string[]>();

  put(hash: string, session: Session, now: number): void {
    for (const [h, s] of this.sessions) {
      if (s.expires > now && this.sessions.size < MAX_SESSIONS) break;
      this.drop(h);
    }
    const mine = this.byAccount.get(session.account) ?? [];
    while (mine.length >= SESSIONS_PER_ACCOUNT) this.drop(mine[0]!);
    this.sessions.set(hash, session);
    mine.push(hash);
    this.byAccount.set(session.account, mine);
  }

  get(hash: string, now: number): Session | undefined {
    const s = this.sessions.get(hash);
    return s && s.expires > now ? s : undefined;
  }

  drop(hash: string): void {
    const s = this.sessions.get(hash);
    if (!s) return;
    this.sessions.delete(hash);
    const mine = this.byAccount.get(s.account)!;
    mine.splice(mine.indexOf(hash), 1);
    if (!mine.length) this.byAccount.delete(s.account);
  }

  get size(): number {
    return this.sessions.size;
  }
}

/**
 * The file store's: accounts and keys from the server's key ring (keys.json as last read, in
 * memory: ring.ts), changes under keys.json's lock (the ring then reads the new file, in a worker, before the
 * same request is answered), and the running server's own usage counts.
 */
export function fileAccountStore(dataDir: string, ring: KeyRing, usage: UsageLedger, work: WorkShare): AccountStore {
  const memory = new MemorySessions();
  const signIns = new MemorySignIns();
  return {
    // Each waits for a changed keys.json being read (in a worker: ring.ts), as admission does: a token replaced or a
    // key revoked by the key tool is refused from the next request on.
    account: async (name) => {
      await ring.ready();
      return ring.account(name);
    },
    keysOf: async (account) => {
      await ring.ready();
      return ring.keysOf(account);
    },
    accountsAfter: async (after, limit) => {
      await ring.ready();
      const names = ring.accountNames();
      let at = 0;
      for (let hi = names.length; at < hi; ) {
        const mid = (at + hi) >>> 1;
        if (names[mid]! <= after) at = mid + 1;
        else hi = mid;
      }
      const page = names.slice(at, at + limit);
      return { accounts: page.map((name) => [name, ring.account(name)!]), more: at + limit < names.length };
    },
    update: async (_account, change) => {
      let result: ReturnType<typeof change>;
      try {
        result = await updateKeyFileAsync(dataDir, change);
      } catch (err) {
        const system = !(err instanceof KeyStoreError) && typeof (err as NodeJS.ErrnoException).code === "string";
        if (!system && !(err instanceof KeyStoreLocked)) throw err;
        // Once per change tried (a person's action, not a request's): the disk, or a key command holding the lock, is
        // the operator's to see to, not the account holder's (the message names the data folder).
        console.error(`dashboard: ${(err as Error).message}; no key or plan was changed.`);
        throw new KeyStoreUnwritable((err as Error).message);
      }
      await ring.ready();
      return result;
    },
    usage: async (month, account, keyIds) => usage.accountMonth(month, account, keyIds),
    spent: async (month, accounts) => accounts.map((account) => usage.spent(account, month)),
    putSession: async (hash, session, now) => memory.put(hash, session, now),
    session: async (hash, now) => memory.get(hash, now),
    dropSession: async (hash) => memory.drop(hash),
    failures: (name, fail, now) => signIns.failures(name, fail, now),
    remember: (name, now) => signIns.remember(name, now),
    known: (name, now) => signIns.known(name, now),
    work,
  };
}
