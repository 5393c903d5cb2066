/** A problem with the key store, said for the person at the terminal (the CLIs print it without a stack). */
import { UserError } from "../errors";

export class KeyStoreError extends UserError {}

/** keys.json's lock held past the wait (another key command, perhaps stopped): the key tool says it; the dashboard logs it and answers 503. */
export class KeyStoreLocked extends KeyStoreError {}

/** The key store's file refused a change (a full or read-only disk): the operator's to fix, told in the log; the dashboard answers 503, nothing changed. */
export class KeyStoreUnwritable extends Error {}
