/**
 * The key ring's reader (ring.ts): reads and checks keys.json off the server's request thread, then
 * hands the store over in parts of at most PART_SIZE accounts and keys: two at first, then one each
 * time the server asks for the next (as it begins to take one), so that the worker makes a part while
 * the server takes the one before, and no turn of the request thread takes more than a part or two.
 */
import { KeyStoreError } from "./errors";
import { parseKeyFile, readKeyText, type Account, type KeyRecord } from "./store";

declare const self: Worker;

/** Accounts and keys in one part: a part costs the request thread about a millisecond to take. */
const PART_SIZE = 2000;

type ReaderRequest = { path: string } | { next: true };
export type ReaderPart =
  | { error: string; keyStore: boolean }
  | { accounts: [string, Account][]; keys: KeyRecord[]; done: boolean };

let accounts: [string, Account][] = [];
let keys: KeyRecord[] = [];
let at = 0;

function nextPart(): ReaderPart {
  const fromAccounts = accounts.slice(at, at + PART_SIZE);
  const keyStart = Math.max(0, at - accounts.length);
  const fromKeys = keys.slice(keyStart, keyStart + PART_SIZE - fromAccounts.length);
  at += fromAccounts.length + fromKeys.length;
  return { accounts: fromAccounts, keys: fromKeys, done: at >= accounts.length + keys.length };
}

self.onmessage = (event: MessageEvent<ReaderRequest>) => {
  const message = event.data;
  if ("path" in message) {
    try {
      const file = parseKeyFile(message.path, readKeyText(message.path));
      [accounts, keys, at] = [Object.entries(file.accounts), file.keys, 0];
    } catch (err) {
      self.postMessage({ error: (err as Error).message, keyStore: err instanceof KeyStoreError } satisfies ReaderPart);
      return;
    }
    self.postMessage(nextPart());
  }
  if (at < accounts.length + keys.length) self.postMessage(nextPart());
};
