/**
 * Names from outside that key the access layer's data (D89): accounts, and the key ids the
 * usage counts are kept by. Such data lives in tables without a prototype (nameTable), where
 * `__proto__` or `constructor` is a key like any other and never reaches Object.prototype.
 * And no account may be named after a member every JavaScript object has, nor `prototype`:
 * the name is refused wherever one enters (the key tool, the dashboard, keys.json as read), so
 * that no store holds one for a plain object elsewhere to trip over.
 */
import { KeyStoreError } from "./errors";
import { printableName, UNSHOWN } from "../printable";
import { codePoints } from "../scripts";

/** What an account's name is made of. */
const ACCOUNT_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** D89: `__proto__`, `constructor`, `toString`, `hasOwnProperty`… and `prototype`. */
const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), "prototype"]);
/** D89: names a URL's path drops as a segment: the dashboard's /dashboard/accounts/../plan is /dashboard/plan to a browser. */
const PATH_SEGMENTS = new Set([".", ".."]);

/**
 * Why `name` cannot name an account, as the end of a sentence whose subject the caller names
 * ("--account …", "An account's name …"); undefined when it can.
 */
export function accountNameProblem(name: string): string | undefined {
  if (!ACCOUNT_NAME.test(name)) return "must be 1 to 64 letters, digits, '.', '_' or '-'";
  if (RESERVED.has(name))
    return `may not be "${name}": no account is named after a member every JavaScript object has (__proto__, constructor, toString…) or prototype (D89). Choose another name`;
  if (PATH_SEGMENTS.has(name))
    return `may not be "${name}": a browser drops it from the dashboard's addresses of the account, so no account is named "." or ".." (D89). Choose another name`;
  return undefined;
}

/** Refuses a new account's name that accountNameProblem refuses: a KeyStoreError, nothing changed. */
export function checkAccountName(name: string): void {
  const problem = accountNameProblem(name);
  if (problem) throw new KeyStoreError(`an account's name ${problem}. Nothing was changed.`);
}

/**
 * A key's name at most, in characters as D6 counts them (code points: an emoji or 𠮷 is one, not the two UTF-16 units
 * `length` counts): the dashboard's field holds this many, and the key tool's list stays a table.
 */
export const KEY_NAME_MAX = 100;

/** Why `name` cannot name a key, as the end of a sentence ("A key's name …"); undefined when it can. */
export function keyNameProblem(name: string): string | undefined {
  const length = codePoints(name);
  if (length > KEY_NAME_MAX) return `must be 1 to ${KEY_NAME_MAX} characters, not ${length}`;
  if (!UNSHOWN.test(name)) return undefined;
  return `may not hold control characters (line breaks, tabs, terminal escapes) or marks that turn the text's direction, as "${printableName(name)}" does`;
}

/** Refuses a new key's name that keyNameProblem refuses: a KeyStoreError, nothing changed. */
export function checkKeyName(name: string): void {
  const problem = keyNameProblem(name);
  if (problem) throw new KeyStoreError(`a key's name ${problem}. Nothing was changed.`);
}

/** Whether a name already kept is one D89 refuses (reading a store: its shape was the key tool's to check). */
export function isReservedName(name: string): boolean {
  return RESERVED.has(name) || PATH_SEGMENTS.has(name);
}

/** A table keyed by names from outside: without a prototype, so that every name is an own key and nothing else is. */
export function nameTable<T>(entries: Iterable<readonly [string, T]> = []): Record<string, T> {
  const table: Record<string, T> = Object.create(null);
  for (const [name, value] of entries) table[name] = value;
  return table;
}
