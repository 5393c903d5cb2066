/** What the current search has done (its work, for /metrics) and when it must stop adding more (its time budget). */
import type { SearchWork } from "../options";
import type { Matches } from "../shard";

export class Meter {
  candidates = 0;
  postings = 0;
  /** When the current search must stop adding work (performance.now() time). */
  private deadline = Infinity;

  /** Starts a search that may work until `deadline`. */
  start(deadline: number): void {
    this.deadline = deadline;
    this.candidates = this.postings = 0;
  }

  /** Whether the current search has used its time budget. */
  late(): boolean {
    return performance.now() > this.deadline;
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
    return { candidates: this.candidates, postings: this.postings };
  }
}
