import { bestEntries, kthLargest } from "./topk";
import { ShardReader } from "./shard-reader";
import { type Derived, MAX_EXPANSIONS, MAX_WORDS, WEIGHTS, type WordSpec } from "./shard-types";

/** How many keys of a variant prefix's range are looked at: a short stem's range can hold thousands of words. */
const VARIANT_SCAN = 512;
/** Terms a run of the vocabulary holds, whose greatest frequency is kept to find a prefix's most frequent terms (prefixExpansions). */
const FREQUENCY_RUN = 64;
/** How many of those keys, the most frequent, are stemmed to see whether they are forms of the word. */
const VARIANT_CHECKS = 16;

/** The index terms a query's words match: exact, by prefix, by typo and as other forms of the word. */
export class TermExpansion extends ShardReader {
  /**
   * The index terms each query word matches, with MiniSearch's weights for prefix and fuzzy
   * matches; at most MAX_EXPANSIONS of each kind per word, the most frequent first. Without
   * `remember`, not kept for the next call (specs made for one look, which would push out a
   * search's own).
   */
  derive(words: WordSpec[], remember = true): Derived[] {
    // The pruned search and the exhaustive one after it derive the same specs, a query's exact
    // ones and its typo ones (a walk of the vocabulary): once each is enough.
    const [last, before] = this.derivedFor;
    if (words === last?.words) return last.derived;
    if (words === before?.words) return before.derived;
    const derived = this.deriveAnew(words);
    if (remember) this.derivedFor = [{ words, derived }, last];
    return derived;
  }

  /** The last two derive() calls' specs (arrays a search makes and never changes) and their terms, the last first. */
  protected derivedFor: [
    last?: { words: WordSpec[]; derived: Derived[] } | undefined,
    before?: { words: WordSpec[]; derived: Derived[] } | undefined,
  ] = [];

  protected deriveAnew(words: WordSpec[]): Derived[] {
    const out: Derived[] = [];
    const vocabulary = this.vocabulary;
    const n = Math.min(words.length, MAX_WORDS);
    for (let word = 0; word < n; word++) {
      const w = words[word]!;
      const exact = vocabulary.get(w.key);
      if (exact !== undefined) out.push({ word, term: exact, weight: 1 });
      // Prefix expansions are the terms [from, to) longer than the key: often thousands for a
      // short word, so they are gathered as term numbers and made objects only once chosen.
      let from = 0;
      let to = 0;
      if (w.prefix) {
        [from, to] = vocabulary.prefixRange(w.key);
        const kept = this.mostFrequent(this.prefixExpansions(from, to, exact));
        for (let i = 0; i < kept; i++) {
          const term = this.expansions[i]!;
          const length = vocabulary.keyLength(term);
          const distance = length - w.key.length;
          out.push({ word, term, weight: (WEIGHTS.prefix * length) / (length + 0.3 * distance) });
        }
      }
      const variantsFrom = out.length;
      if (w.variants) {
        const { ranges, accept } = w.variants;
        let found = 0;
        let seenFrom = 0;
        let seenTo = 0;
        for (const { prefix, longest } of ranges) {
          const [start, end] = vocabulary.prefixRange(prefix);
          for (let term = start; term < end && term < start + VARIANT_SCAN; term++) {
            if (
              term === exact ||
              (term >= from && term < to) ||
              (term >= seenFrom && term < seenTo) ||
              vocabulary.keyLength(term) > longest
            )
              continue;
            this.expansion(found++, term);
          }
          seenFrom = start;
          seenTo = Math.min(end, start + VARIANT_SCAN);
        }
        // Stemming a word costs microseconds: only the most frequent candidates are asked.
        const checked = this.mostFrequent(found, VARIANT_CHECKS);
        let kept = 0;
        for (let i = 0; i < checked; i++) {
          const term = this.expansions[i]!;
          if (accept(vocabulary.keyOf(term))) this.expansions[kept++] = term;
        }
        for (let i = 0; i < kept; i++)
          out.push({ word, term: this.expansions[i]!, weight: WEIGHTS.variant, variant: true });
      }
      const variantsTo = out.length;
      if (w.fuzzy > 0) {
        let found = 0;
        const keyLength = w.key.length;
        vocabulary.typoTerms(w.key, w.fuzzy, (term, distance) => {
          // Not the key itself, nor a term its prefix expansions or its variants hold.
          if (!distance || (term >= from && term < to && vocabulary.keyLength(term) !== keyLength)) return;
          for (let i = variantsFrom; i < variantsTo; i++) if (out[i]!.term === term) return;
          this.expansionDistances[found] = distance;
          this.expansion(found++, term);
        });
        const kept = this.mostFrequent(found);
        for (let i = 0; i < kept; i++) {
          const term = this.expansions[i]!;
          const length = vocabulary.keyLength(term);
          out.push({
            word,
            term,
            weight: (WEIGHTS.fuzzy * length) / (length + this.expansionDistances[i]!),
            typo: true,
          });
        }
      }
    }
    return out;
  }

  /**
   * The expansions of a prefix, the terms [from, to) but the key itself (`exact`), into
   * `expansions`; returns their number. Few: all of them, last key first (the order
   * MiniSearch's atPrefix gave them in, which sets the order scores are summed in when they
   * are no more than MAX_EXPANSIONS). Many ("in" typed on has 58,000 at 5M chunks: 0.9 ms a
   * search): only those as frequent as the (MAX_EXPANSIONS + 2)th most frequent term of a
   * whole run of FREQUENCY_RUN terms in the range, found from each run's most frequent (those
   * runs' best are that many terms at least as frequent, one of them perhaps the key): the
   * most frequent are among them, and more than MAX_EXPANSIONS are, so they are chosen and
   * ordered by frequency, as from all.
   */
  protected prefixExpansions(from: number, to: number, exact: number | undefined): number {
    let found = 0;
    const firstRun = Math.ceil(from / FREQUENCY_RUN);
    const endRun = Math.floor(to / FREQUENCY_RUN);
    if (endRun - firstRun < MAX_EXPANSIONS + 2) {
      for (let term = to - 1; term >= from; term--) if (term !== exact) this.expansion(found++, term);
      return found;
    }
    const runMost = this.runMostFrequent();
    const floor = kthLargest(runMost.subarray(firstRun, endRun), MAX_EXPANSIONS + 2);
    const gather = (start: number, end: number) => {
      for (let term = start; term < end; term++)
        if (term !== exact && this.frequency(term) >= floor) this.expansion(found++, term);
    };
    gather(from, firstRun * FREQUENCY_RUN);
    for (let run = firstRun; run < endRun; run++)
      if (runMost[run]! >= floor) gather(run * FREQUENCY_RUN, (run + 1) * FREQUENCY_RUN);
    gather(endRun * FREQUENCY_RUN, to);
    return found;
  }

  /**
   * Makes what derive() reads of the vocabulary once for every search (at boot: never inside a
   * timed search, nor a user's first typo: 4.2M keys' runs took 190 ms at 5M chunks).
   */
  prepare(): void {
    this.runMostFrequent();
    const started = performance.now();
    this.vocabulary.typoRuns();
    this.runMakingMs += performance.now() - started;
  }

  /** Each run of FREQUENCY_RUN terms' greatest frequency, made once by prepare() at boot (a pass over the vocabulary: 4.26M terms and 28.5 ms at 5M chunks). */
  protected runMostFrequent(): Float64Array {
    if (this.runMost) return this.runMost;
    const started = performance.now();
    const size = this.vocabulary.size;
    const runMost = new Float64Array(Math.ceil(size / FREQUENCY_RUN));
    for (let term = 0; term < size; term++) {
      const f = this.frequency(term);
      const run = (term / FREQUENCY_RUN) | 0;
      if (f > runMost[run]!) runMost[run] = f;
    }
    this.runMost = runMost;
    this.runMakingMs = performance.now() - started;
    return runMost;
  }

  protected runMost: Float64Array | undefined;
  protected runMakingMs = 0;

  /** A word's expansions while derive() chooses among them: term numbers, and (typos) their distances. */
  protected expansions = new Uint32Array(1024);
  protected expansionDistances = new Uint8Array(1024);
  /** The expansions' frequencies while the most frequent are chosen (a short prefix can have thousands), and their one class for bestEntries. */
  protected expansionFrequency = new Float64Array(1024);
  protected expansionClass = new Uint8Array(1024);
  protected readonly keptTerms = new Uint32Array(Math.max(MAX_EXPANSIONS, VARIANT_CHECKS));
  protected readonly keptDistances = new Uint8Array(Math.max(MAX_EXPANSIONS, VARIANT_CHECKS));

  protected expansion(i: number, term: number): void {
    if (i >= this.expansions.length) {
      const terms = new Uint32Array(this.expansions.length * 2);
      terms.set(this.expansions);
      this.expansions = terms;
      const distances = new Uint8Array(terms.length);
      distances.set(this.expansionDistances);
      this.expansionDistances = distances;
      this.expansionFrequency = new Float64Array(terms.length);
      this.expansionClass = new Uint8Array(terms.length);
    }
    this.expansions[i] = term;
  }

  /**
   * Keeps the MAX_EXPANSIONS most frequent of the first `found` expansions, in that order
   * (ties: the lower term number, for a stable order), or all of them in their order when
   * they are no more: their number, the kept ones first in expansions and expansionDistances.
   */
  protected mostFrequent(found: number, keep = MAX_EXPANSIONS): number {
    if (found <= keep) return found;
    const terms = this.expansions;
    const distances = this.expansionDistances;
    const frequency = this.expansionFrequency;
    for (let i = 0; i < found; i++) frequency[i] = this.frequency(terms[i]!);
    // Selected, not sorted: "the" typed on has tens of thousands of expansions at 5M chunks.
    const chosen = bestEntries(this.expansionClass, frequency, found, keep, terms);
    // Gathered before writing back: the chosen positions are read from the lists being rewritten.
    const { keptTerms, keptDistances } = this;
    for (let i = 0; i < keep; i++) {
      keptTerms[i] = terms[chosen[i]!]!;
      keptDistances[i] = distances[chosen[i]!]!;
    }
    terms.set(keptTerms.subarray(0, keep));
    distances.set(keptDistances.subarray(0, keep));
    return keep;
  }
}
