/** A problem with the key store, said for the person at the terminal (the CLIs print it without a stack). */
import { UserError } from "../errors";

export class KeyStoreError extends UserError {}
