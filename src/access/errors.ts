/** A problem with the key store, said for the person at the terminal (the CLIs print it without a stack). */
export class KeyStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyStoreError";
  }
}
