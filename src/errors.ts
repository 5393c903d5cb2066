/**
 * UserError: the base of every error the person at the terminal can fix (a damaged key store,
 * a bad option, a port in use). The CLIs print its message on one line and exit with its code,
 * never with a stack trace (src/cli/main.ts); anything else is a fault of ours and is thrown.
 */
export class UserError extends Error {
  constructor(
    message: string,
    /** The process's exit code: 1 by default, 2 for a mistake in how the command was called. */
    readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
