/**
 * nice -n 10 bun bench/relevance/tune.ts [--minutes N] [--snapshots DIR] [--out FILE]
 *
 * Tunes the score's parameters (src/search/ranking/parameters.ts: BM25's k1, b and floor, the
 * section and title fields' boosts, the prefix, typo and other-form weights, page evidence,
 * the title boost, proximity, the passage's weights) by coordinate ascent, as Anserini tunes
 * BM25 by a search over a grid: one parameter at a time, each tried at a few multiples of its
 * value, the best kept; sweeps over every parameter until none gains, then again with smaller
 * steps. Each question set (relevance.ts's: SQuAD dev and the dev qrels) is split in two halves
 * by a hash of each question's id (question-sets.ts half()); the ascent sees only the tuning
 * halves. Its objective is the mean of SQuAD's answer in the top chunk and the qrels' nDCG@10,
 * and a step is taken only if no measure of the tuning halves falls below where the ascent
 * started (SQuAD nDCG@10, page R@1, answer; qrels nDCG@10, R@1, R@10, MRR). At the end, the
 * defaults and the chosen values on the held-out halves and on the whole sets (with --evaluate, on
 * the tuning halves first: where values proposed by hand are to be judged).
 *
 * Every trial opens the snapshots' indexes anew (a shard computes its length norms, k1 and b,
 * when opened) and searches exhaustively (`pruning: false`): the blocks' impacts were chosen
 * under the b the snapshot was built with, and the exhaustive ranking is exact under any.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  DEFAULT_PARAMETERS,
  PARAMETER_NAMES,
  type ParameterName,
  type ScoreParameters,
  setScoreParameters,
} from "../../src/search/ranking/parameters";
import { sharedDataDir } from "../support";
import {
  engineOf,
  type Figures,
  half,
  measure,
  type Question,
  qrelsQuestions,
  setSnapshot,
  squadQuestions,
} from "./question-sets";

const USAGE = `Usage: nice -n 10 bun bench/relevance/tune.ts [options]
Coordinate ascent over the score's parameters on half of SQuAD dev and half of the dev qrels;
then the defaults and the values chosen, on the other halves and on the whole sets.
  --minutes N       start no trial after N minutes (default 60); the final figures follow
  --min-gain X      a step must raise the objective by at least X (default 0.0005: five SQuAD questions' answers)
  --start JSON      start from these parameters over the defaults, e.g. '{"k1":1.5}'
  --evaluate JSON   no ascent: only the final figures of these parameters against the defaults, the
                    tuning halves' first (judge them there; the held-out halves judge the choice)
  --only NAMES      the ascent moves only these parameters (commas: passageCoverage,passageWindow)
  --snapshots DIR   build the two snapshots there once, and reuse them on later runs
                    (default: a temporary directory, removed at the end)
  --out FILE        also write the run (every trial, the values chosen, the figures) as JSON
Parameters: ${PARAMETER_NAMES.join(", ")}.`;

function parse() {
  try {
    const { values } = parseArgs({
      args: Bun.argv.slice(2),
      options: {
        minutes: { type: "string" },
        "min-gain": { type: "string" },
        start: { type: "string" },
        evaluate: { type: "string" },
        only: { type: "string" },
        snapshots: { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const number = (name: string, text: string | undefined, fallback: number) => {
      if (text === undefined) return fallback;
      const x = Number(text);
      if (!(Number.isFinite(x) && x >= 0)) throw new Error(`--${name} must be a number ≥ 0, not "${text}"`);
      return x;
    };
    const json = (name: string, text: string | undefined): Partial<ScoreParameters> | undefined => {
      if (text === undefined) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`--${name} must be a JSON object of parameters, e.g. '{"k1":1.5}', not ${text}`);
      }
      const bad = Object.keys(parsed as object).filter((k) => !PARAMETER_NAMES.includes(k as ParameterName));
      if (typeof parsed !== "object" || parsed === null || bad.length)
        throw new Error(`--${name}: no parameter ${bad.join(", ")}; they are ${PARAMETER_NAMES.join(", ")}`);
      return parsed as Partial<ScoreParameters>;
    };
    const only = values.only?.split(",").map((n) => n.trim()) ?? PARAMETER_NAMES;
    const unknown = only.filter((n) => !PARAMETER_NAMES.includes(n as ParameterName));
    if (unknown.length)
      throw new Error(`--only: no parameter ${unknown.join(", ")}; they are ${PARAMETER_NAMES.join(", ")}`);
    return {
      only: only as ParameterName[],
      minutes: number("minutes", values.minutes, 60),
      minGain: number("min-gain", values["min-gain"], 0.0005),
      start: json("start", values.start),
      evaluate: json("evaluate", values.evaluate),
      snapshots: values.snapshots,
      out: values.out,
    };
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

/** A parameter's candidates around its value: multiples of it (b: steps, within [0, 1]). */
function candidates(name: ParameterName, value: number, fine: boolean): number[] {
  const round = (x: number) => Math.round(x * 1000) / 1000;
  if (name === "b") {
    const steps = fine ? [-0.05, 0.05] : [-0.2, -0.1, 0.1, 0.2];
    return steps.map((s) => round(value + s)).filter((x) => x >= 0 && x <= 1);
  }
  if (value === 0) return fine ? [0.05] : [0.1, 0.25];
  const factors = fine ? [0.85, 1.15] : [0.5, 0.75, 1.33, 2];
  return factors.map((f) => round(value * f));
}

/** The measures no step may lower, per set. */
const GUARDED: { set: "squad" | "qrels"; measure: keyof Figures }[] = [
  { set: "squad", measure: "ndcg10" },
  { set: "squad", measure: "recall1" },
  { set: "squad", measure: "answer" },
  { set: "qrels", measure: "ndcg10" },
  { set: "qrels", measure: "recall1" },
  { set: "qrels", measure: "recall10" },
  { set: "qrels", measure: "mrr" },
];

/** One set of parameters' figures on a part of both sets. */
interface PartFigures {
  squad: Figures;
  qrels: Figures;
  objective: number;
}

interface Trial extends PartFigures {
  parameters: ScoreParameters;
}

const objectiveOf = (squad: Figures, qrels: Figures) => (squad.answer! + qrels.ndcg10) / 2;

/** The snapshots, built once (or found in --snapshots), opened, with their questions split in halves. */
async function corpora(dir: string) {
  const data = sharedDataDir();
  const build = (name: string, dumps: string[]) => setSnapshot(dir, name, dumps, data);
  const squad = await build("squad", ["squad-dev-articles.xml.bz2"]);
  const qrels = await build("qrels", ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2"]);
  const squadAll = await squadQuestions(engineOf(squad), data);
  const qrelsAll = await qrelsQuestions(engineOf(qrels), data);
  const split = (qs: Question[]) => ({
    tune: qs.filter((q) => !half(q.id)),
    held: qs.filter((q) => half(q.id)),
  });
  return { squad: { snapshot: squad, ...split(squadAll) }, qrels: { snapshot: qrels, ...split(qrelsAll) } };
}

type Corpora = Awaited<ReturnType<typeof corpora>>;

/** The figures of parameters on one half of each set: "tune" or "held". */
function figuresOf(c: Corpora, parameters: ScoreParameters, part: "tune" | "held"): PartFigures {
  setScoreParameters(parameters);
  try {
    const exhaustive = { pruning: false } as const;
    const squad = measure(engineOf(c.squad.snapshot), c.squad[part], exhaustive);
    const qrels = measure(engineOf(c.qrels.snapshot), c.qrels[part], exhaustive);
    return { squad, qrels, objective: objectiveOf(squad, qrels) };
  } finally {
    setScoreParameters(DEFAULT_PARAMETERS);
  }
}

/** Both whole sets' figures from their two halves' (each question is in one): their means weighed by their questions. */
function wholeOf(a: PartFigures, b: PartFigures): PartFigures {
  const whole = (x: Figures, y: Figures): Figures => {
    const n = x.questions + y.questions || 1;
    const mean = (u: number, v: number) => (u * x.questions + v * y.questions) / n;
    return {
      questions: x.questions + y.questions,
      ndcg10: mean(x.ndcg10, y.ndcg10),
      recall1: mean(x.recall1, y.recall1),
      recall10: mean(x.recall10, y.recall10),
      mrr: mean(x.mrr, y.mrr),
      ...(x.answer === undefined || y.answer === undefined ? {} : { answer: mean(x.answer, y.answer) }),
    };
  };
  const squad = whole(a.squad, b.squad);
  const qrels = whole(a.qrels, b.qrels);
  return { squad, qrels, objective: objectiveOf(squad, qrels) };
}

const f4 = (x: number | undefined) => (x === undefined ? "" : x.toFixed(4));
const clock = (ms: number) => `${Math.floor(ms / 60_000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`;

function ascend(
  c: Corpora,
  start: ScoreParameters,
  minutes: number,
  minGain: number,
  names: readonly ParameterName[],
): Trial[] {
  const started = performance.now();
  const trials: Trial[] = [];
  const seen = new Map<string, Trial>();
  const run = (parameters: ScoreParameters): Trial => {
    const key = JSON.stringify(parameters);
    const known = seen.get(key);
    if (known) return known;
    const t = { parameters, ...figuresOf(c, parameters, "tune") };
    seen.set(key, t);
    trials.push(t);
    return t;
  };
  const base = run(start);
  const passes = (t: Trial) => GUARDED.every((g) => t[g.set][g.measure]! >= base[g.set][g.measure]!);
  console.error(
    `start: objective ${f4(base.objective)} (SQuAD answer ${f4(base.squad.answer)}, qrels nDCG@10 ${f4(base.qrels.ndcg10)}) on ${base.squad.questions} + ${base.qrels.questions} tuning questions`,
  );
  let best = base;
  const outOfTime = () => performance.now() - started > minutes * 60_000;
  for (const fine of [false, true]) {
    for (let sweep = 1, gained = true; gained && !outOfTime(); sweep++) {
      gained = false;
      for (const name of names) {
        let step: Trial | undefined;
        for (const value of candidates(name, best.parameters[name], fine)) {
          if (outOfTime()) break;
          const t = run({ ...best.parameters, [name]: value });
          const ok = passes(t) && t.objective >= best.objective + minGain;
          console.error(
            `${clock(performance.now() - started)} ${fine ? "fine" : "coarse"} sweep ${sweep}, trial ${trials.length}: ${name} ${best.parameters[name]} → ${value}: objective ${f4(t.objective)} (answer ${f4(t.squad.answer)}, nDCG@10 ${f4(t.qrels.ndcg10)})${ok ? " gains" : passes(t) ? "" : " (a measure falls)"}`,
          );
          if (ok && (!step || t.objective > step.objective)) step = t;
        }
        if (step) {
          best = step;
          gained = true;
          console.error(`  kept ${name} = ${best.parameters[name]}: objective ${f4(best.objective)}`);
        }
      }
    }
  }
  console.error(
    `${clock(performance.now() - started)}: ${trials.length} trials; objective ${f4(base.objective)} → ${f4(best.objective)}`,
  );
  return [best, ...trials.filter((t) => t !== best)];
}

function table(title: string, before: PartFigures, after: PartFigures): string {
  const rows: [string, number | undefined, number | undefined][] = [
    [`SQuAD nDCG@10 (${before.squad.questions})`, before.squad.ndcg10, after.squad.ndcg10],
    ["SQuAD page R@1", before.squad.recall1, after.squad.recall1],
    ["SQuAD answer in the top chunk", before.squad.answer, after.squad.answer],
    [`dev qrels nDCG@10 (${before.qrels.questions})`, before.qrels.ndcg10, after.qrels.ndcg10],
    ["dev qrels R@1", before.qrels.recall1, after.qrels.recall1],
    ["dev qrels R@10", before.qrels.recall10, after.qrels.recall10],
    ["dev qrels MRR", before.qrels.mrr, after.qrels.mrr],
  ];
  const lines = [`### ${title}`, "", "| measure | defaults | chosen | change |", "|---|---|---|---|"];
  for (const [name, b, a] of rows) {
    const d = a! - b!;
    lines.push(`| ${name} | ${f4(b)} | ${f4(a)} | ${d > 0 ? "+" : ""}${f4(d)} |`);
  }
  return lines.join("\n");
}

const args = parse();
const dir = args.snapshots ?? mkdtempSync(join(tmpdir(), "tome-tune-"));
mkdirSync(dir, { recursive: true });
try {
  const c = await corpora(dir);
  console.error(
    `SQuAD: ${c.squad.tune.length} tuning, ${c.squad.held.length} held out; qrels: ${c.qrels.tune.length} tuning, ${c.qrels.held.length} held out`,
  );
  const defaults = { ...DEFAULT_PARAMETERS };
  const start = { ...defaults, ...(args.evaluate ?? args.start) };
  const trials = args.evaluate ? [] : ascend(c, start, args.minutes, args.minGain, args.only);
  const chosen = trials[0]?.parameters ?? start;
  const changed = PARAMETER_NAMES.filter((n) => chosen[n] !== defaults[n]);
  console.log(
    `## Parameters\n\n| parameter | default | chosen |\n|---|---|---|\n${PARAMETER_NAMES.map((n) => `| ${n} | ${defaults[n]} | ${chosen[n]}${changed.includes(n) ? " ←" : ""} |`).join("\n")}\n`,
  );
  // The tuning halves' figures the ascent already has are not searched again; the whole sets are the two halves.
  const onTuning = (p: ScoreParameters) =>
    trials.find((t) => JSON.stringify(t.parameters) === JSON.stringify(p)) ?? figuresOf(c, p, "tune");
  const tuning = [onTuning(defaults), onTuning(chosen)] as const;
  // Without an ascent, the tuning halves are where the values are to be judged: printed first.
  if (args.evaluate) {
    console.log(`${table("Tuning halves (exhaustive search)", ...tuning)}\n`);
    console.log(`Objective on the tuning halves: ${f4(tuning[0].objective)} → ${f4(tuning[1].objective)}\n`);
  }
  const held = [figuresOf(c, defaults, "held"), figuresOf(c, chosen, "held")] as const;
  console.log(`${table("Held-out halves (exhaustive search)", ...held)}\n`);
  const all = [wholeOf(tuning[0], held[0]), wholeOf(tuning[1], held[1])] as const;
  console.log(table("Whole sets (exhaustive search)", ...all));
  const falls = (["squad", "qrels"] as const).flatMap((s) =>
    GUARDED.filter((g) => g.set === s && held[1][s][g.measure]! < held[0][s][g.measure]!).map(
      (g) => `${s} ${g.measure}`,
    ),
  );
  console.log(
    `\n${falls.length ? `On the held-out halves these fall: ${falls.join(", ")}; keep the defaults.` : "No measure of the held-out halves falls."}`,
  );
  if (args.out) await Bun.write(args.out, JSON.stringify({ defaults, chosen, held, all, trials }, null, 1));
} finally {
  if (!args.snapshots) rmSync(dir, { recursive: true, force: true });
}
