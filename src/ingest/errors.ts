import { UserError } from "../errors";

/** A dump that cannot be read, or whose content is damaged. The message is written for the user. */
export class DumpError extends UserError {
  /** True when the input itself is damaged (truncated or corrupt), as opposed to unreachable or unsupported. */
  readonly damaged: boolean;
  constructor(message: string, opts: { damaged?: boolean } = {}) {
    super(message);
    this.damaged = opts.damaged ?? false;
  }
}
