import { UserError, type UserErrorOptions } from "../errors";

/** A dump that cannot be read, or whose content is damaged. The message is written for the user. */
export class DumpError extends UserError {
  /** True when the input itself is damaged (truncated or corrupt), as opposed to unreachable or unsupported. */
  readonly damaged: boolean;
  constructor(message: string, { damaged = false, ...rest }: UserErrorOptions & { damaged?: boolean } = {}) {
    super(message, rest);
    this.damaged = damaged;
  }
}
