/** The score's parameters by name (ranking/parameters.ts, D96): what a tuning trial sets, and what it cannot. */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Engine, loadIndexes, open } from "../src/search";
import {
  DEFAULT_PARAMETERS,
  PARAMETER_NAMES,
  scoreParameters,
  setScoreParameters,
} from "../src/search/ranking/parameters";
import { TEXT_BOOSTS } from "../src/search/postings/fields";
import { BM25, WEIGHTS } from "../src/search/postings/shard-types";
import { RULES } from "../src/search/ranking/rules";
import { openSnapshot, SnapshotError } from "../src/snapshot";
import { SQUAD, snapshotFor } from "./helpers";

setDefaultTimeout(120_000);

const squad = () => snapshotFor({ dumps: [SQUAD] });
const Q = "What was the name of the stadium where Super Bowl 50 took place?";

/** An engine over the snapshot without its stored page orders (made under the defaults), as tune.ts opens one. */
function engine(path: string): Engine {
  const snapshot = openSnapshot(path);
  const { text, titles } = loadIndexes(snapshot);
  return new Engine(snapshot, text, titles, null);
}

afterEach(() => setScoreParameters(DEFAULT_PARAMETERS));

describe("score parameters", () => {
  test("the defaults are the source's values, one a name", () => {
    expect(scoreParameters()).toEqual({ ...DEFAULT_PARAMETERS });
    expect([DEFAULT_PARAMETERS.k1, DEFAULT_PARAMETERS.b, DEFAULT_PARAMETERS.bm25Floor]).toEqual([
      BM25.k,
      BM25.b,
      BM25.d,
    ]);
    expect([DEFAULT_PARAMETERS.sectionBoost, DEFAULT_PARAMETERS.titleFieldBoost]).toEqual(TEXT_BOOSTS.slice(1));
    expect(DEFAULT_PARAMETERS.variant).toBe(WEIGHTS.variant);
    expect(DEFAULT_PARAMETERS.pageEvidence).toBe(RULES.pageEvidence);
    expect(Object.keys(DEFAULT_PARAMETERS)).toEqual(PARAMETER_NAMES);
  });

  test("an engine opened after a parameter is set scores by it; the defaults set again, by them", async () => {
    const path = await squad();
    const before = engine(path).search(Q, { pruning: false }).hits[0]!;
    setScoreParameters({ k1: 2, titleBoost: 0 });
    const tuned = engine(path).search(Q, { pruning: false }).hits[0]!;
    expect(tuned.score).not.toBe(before.score);
    setScoreParameters(DEFAULT_PARAMETERS);
    const again = engine(path).search(Q, { pruning: false }).hits[0]!;
    expect([again.page.pageId, again.chunk, again.score]).toEqual([before.page.pageId, before.chunk, before.score]);
  });

  test("a snapshot's page orders made under other parameters are refused, with what to do", async () => {
    const path = await squad();
    expect(() => open(path)).not.toThrow();
    setScoreParameters({ pageEvidence: 0.6 });
    expect(() => open(path)).toThrow(/made under other ranking rules.*Rebuild it/);
    // Said as what it is, naming the file: it was wrapped as damage ("is it damaged? snapshot:verify …"), which
    // verify then denied, for every snapshot built before a raise of RULES_VERSION (D185).
    const refusal = (() => {
      try {
        open(path);
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(SnapshotError);
    expect((refusal as Error).message).toStartWith(`${path}: its page orders were made under other ranking rules`);
    expect((refusal as Error).message).not.toMatch(/is it damaged|snapshot:verify/);
  });

  test("an unknown name or a value that is not a number ≥ 0 is refused, and nothing is set", () => {
    expect(() => setScoreParameters({ k1: 2, k3: 1 } as never)).toThrow('no score parameter "k3"');
    expect(() => setScoreParameters({ k1: 2, b: -1 })).toThrow("b must be a finite number ≥ 0");
    expect(() => setScoreParameters({ b: Number.NaN })).toThrow("b must be");
    expect(() => setScoreParameters({ b: 1.5 })).toThrow("b must be in [0, 1]");
    expect(() => setScoreParameters({ k1: 0 })).toThrow("k1 must be in (0, ∞)");
    expect(scoreParameters()).toEqual({ ...DEFAULT_PARAMETERS });
  });
});
