/** What memory a build may take (D161), and the rule a memory budget is checked by (D115). */
import { MEMORY_BOUND, MOST_MEMORY_BYTES } from "../../build-defaults";
import type { OptionRule } from "../../errors";

/** A memory budget's rule (D115): the build's, the update's and the index builder's. */
export const MEMORY_RULE: OptionRule = [
  (v) => typeof v === "number" && v > 0 && v <= MOST_MEMORY_BYTES,
  `a number of bytes above 0, at most ${MEMORY_BOUND.limited ? "this container's memory limit" : "this machine's memory"} (${MOST_MEMORY_BYTES.toLocaleString("en-US")})`,
];
