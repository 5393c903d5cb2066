import { setDefaultTimeout } from "bun:test";

// Tests build snapshots from the real dumps: seconds each, more on a loaded machine.
setDefaultTimeout(120_000);
