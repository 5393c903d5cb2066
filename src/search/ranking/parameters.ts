/**
 * The score's parameters by name, in one place (D96): BM25's (k1, b, the BM25+ floor), the
 * text fields' boosts against the text's 1, the weights of a word's prefix completions, typos
 * and other forms, and the rules' own (rules.ts RULES). Each lives beside the code that reads
 * it; these are their defaults. A tuning trial (bench/relevance/tune.ts) sets others before it
 * opens an engine: a shard computes its length norms (k1, b) when opened, and every other
 * parameter is read as a search runs. Not part of the HTTP API or of the snapshot: a snapshot
 * built under other parameters has page orders of another rules' fingerprint and is refused.
 * Under a b other than the one a snapshot was built with, its blocks' impacts are no longer
 * their blocks' best: a trial searches exhaustively (`pruning: false`).
 */
import { TEXT_BOOSTS } from "../postings/fields";
import { BM25, WEIGHTS } from "../postings/shard-types";
import { RULES } from "./rules";

export type ScoreParameters = Record<ParameterName, number>;
export type ParameterName = keyof typeof PLACES;

/** Where each parameter is read from: an object and its key. */
const PLACES = {
  k1: [BM25, "k"],
  b: [BM25, "b"],
  bm25Floor: [BM25, "d"],
  sectionBoost: [TEXT_BOOSTS, 1],
  titleFieldBoost: [TEXT_BOOSTS, 2],
  prefix: [WEIGHTS, "prefix"],
  fuzzy: [WEIGHTS, "fuzzy"],
  variant: [WEIGHTS, "variant"],
  pageEvidence: [RULES, "pageEvidence"],
  titleBoost: [RULES, "titleBoost"],
  proximity: [RULES, "proximity"],
  passageVariant: [RULES, "passageVariant"],
  passageFunction: [RULES, "passageFunction"],
  passageCoverage: [RULES, "passageCoverage"],
  passageWindow: [RULES, "passageWindow"],
  pageCoverage: [RULES, "pageCoverage"],
  pageText: [RULES, "pageText"],
} as const;

export const PARAMETER_NAMES = Object.keys(PLACES) as ParameterName[];

const place = (name: ParameterName) => PLACES[name] as unknown as [Record<string | number, number>, string | number];

/** The parameters a search reads now. */
export function scoreParameters(): ScoreParameters {
  return Object.fromEntries(
    PARAMETER_NAMES.map((name) => {
      const [object, key] = place(name);
      return [name, object[key]!];
    }),
  ) as ScoreParameters;
}

/** The defaults: the values in the source. */
export const DEFAULT_PARAMETERS: Readonly<ScoreParameters> = Object.freeze(scoreParameters());

/** Sets the parameters named (others keep theirs), for engines opened afterwards; a bad value is refused before any is set. */
export function setScoreParameters(values: Partial<ScoreParameters>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!(name in PLACES)) throw new Error(`no score parameter "${name}"; they are ${PARAMETER_NAMES.join(", ")}`);
    if (!(typeof value === "number" && Number.isFinite(value) && value >= 0))
      throw new Error(`score parameter ${name} must be a finite number ≥ 0, not ${value}`);
    // k1 divides every length norm (norms.ts); b above 1 makes a long field's norm negative.
    if ((name === "k1" && value === 0) || (name === "b" && value > 1))
      throw new Error(`score parameter ${name} must be in ${name === "k1" ? "(0, ∞)" : "[0, 1]"}, not ${value}`);
  }
  for (const [name, value] of Object.entries(values)) {
    const [object, key] = place(name as ParameterName);
    object[key] = value as number;
  }
}
