/** What the current search has done (its work, for /metrics) and when it must stop adding more (its time budget). */
import type { SearchWork } from "../options";
import type { Matches } from "../postings/shard-types";

export class Meter {
  candidates = 0;
  postings = 0;
  /** The current search's plan (plans/plan.ts). */
  plan = "";
  /** Whether the current search ran out of time and answers with what it had found (D91). */
  cutOff = false;
  /** When the current search must stop adding work (performance.now() time). */
  private deadline = Infinity;
  /** The engine's time not counted against a search (milliseconds so far), and its value when the search started. */
  private uncountedAtStart = 0;

  /** `uncounted`: the time the engine spent, so far, on what is done once for every later search (Shard.onceMakingMs). */
  constructor(private readonly uncounted: () => number = () => 0) {}

  /** Starts a search that may work until `deadline`. */
  start(deadline: number): void {
    this.deadline = deadline;
    this.uncountedAtStart = this.uncounted();
    this.candidates = this.postings = 0;
    this.plan = "";
    this.cutOff = false;
  }

  /** Whether the current search has used its time budget (what it made for every later search not counted). */
  late(): boolean {
    return performance.now() - (this.uncounted() - this.uncountedAtStart) > this.deadline;
  }

  /** Counts a pass's matches as the current search's work. */
  counted(m: Matches): Matches {
    this.add(m.count, m.postings);
    return m;
  }

  add(candidates: number, postings: number): void {
    this.candidates += candidates;
    this.postings += postings;
  }

  work(): SearchWork {
    return { candidates: this.candidates, postings: this.postings, plan: this.plan, cutOff: this.cutOff };
  }
}
