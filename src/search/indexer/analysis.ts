/**
 * What the inversion does to each field of a chunk before its postings are kept: the tokens
 * numbered by their keys (processTerm), their counts, their positions grouped by term. The
 * Inversion does it on the thread that keeps the postings; a build's parsing workers do it
 * beside the parse (PageAnalyser, D139), so that the thread keeping the postings only numbers
 * each page's keys.
 */
import { Growable } from "../../snapshot";
import { textShardOptions } from "../postings/fields";
import type { ShardOptions } from "../postings/shard-types";
import { TokenTable } from "../postings/token-table";

/** One field's value analysed: its distinct terms in order of appearance, their frequencies, and where each one's positions start. */
export interface AnalysedField {
  /** The value, to see the next chunk's is the same (a page's title, a section's heading); null: not to be compared. */
  value: string | null;
  terms: number[];
  freqs: number[];
  positionsAt: number[];
}

/** Where positions go: a column that grows. */
interface PositionSink {
  readonly length: number;
  push(v: number): void;
}

/**
 * A string of its own: a token cut from a chunk's text, or a key split from a page's keys, is a
 * view of the whole string in Bun's engine and holds it (a kept key held its page's keys: a 1M-chunk
 * build's peak went from 1.4 to 2.2 GB). Joined anew, it holds only itself.
 */
function own(part: string): string {
  return [part, ""].join("");
}

/** Tokens and keys to term numbers, a term for each key (many tokens may share a key), numbered as they are first seen. */
export class TermNumbers {
  readonly keys: string[] = [];
  private readonly termOfToken = new TokenTable();
  private readonly termOfKey = new TokenTable();
  private sequence: number[] = [];
  private slot = new Uint32Array(1 << 16);
  private tf = new Uint32Array(1 << 16);

  constructor(private readonly options: ShardOptions) {}

  /** A key's term number, a new one for a key not seen before. */
  ofKey(key: string): number {
    let term = this.termOfKey.get(key);
    if (term < 0) {
      term = this.keys.length;
      const owned = own(key);
      this.keys.push(owned);
      this.termOfKey.add(owned, term);
      if (term >= this.tf.length) this.grow();
    }
    return term;
  }

  /** A token's term number. */
  ofToken(token: string): number {
    const known = this.termOfToken.get(token);
    if (known >= 0) return known;
    const term = this.ofKey(this.options.processTerm(token));
    this.termOfToken.add(own(token), term);
    return term;
  }

  /**
   * A field's value: its distinct terms in order of appearance, their frequencies, and (when
   * `positions` is given) their positions, each term's together in the order of the terms,
   * appended to it.
   */
  analyse(value: string, positions?: PositionSink): AnalysedField {
    const found: number[] = [];
    const sequence = this.sequence;
    sequence.length = 0;
    for (const token of this.options.tokenize(value)) {
      const term = this.ofToken(token);
      if (this.tf[term]!++ === 0) found.push(term);
      if (positions) sequence.push(term);
    }
    const tf = this.tf;
    const field: AnalysedField = { value, terms: found, freqs: found.map((t) => tf[t]!), positionsAt: [] };
    if (positions) {
      const slot = this.slot;
      const base = positions.length;
      let at = 0;
      field.positionsAt = found.map((t) => {
        slot[t] = at;
        at += tf[t]!;
        return base + slot[t]!;
      });
      const grouped = new Uint32Array(sequence.length);
      for (const [position, t] of sequence.entries()) grouped[slot[t]!++] = position;
      for (const position of grouped) positions.push(position);
    }
    for (const t of found) tf[t] = 0;
    return field;
  }

  private grow(): void {
    const grown = new Uint32Array(this.tf.length * 2);
    grown.set(this.tf);
    this.tf = grown;
    this.slot = new Uint32Array(grown.length);
  }
}

/**
 * A page's chunks analysed where the page was parsed: for each chunk and field (chunk × F +
 * field, F the shard's fields) its distinct terms' count, or SAME_AS_BEFORE when the value is the
 * previous chunk's (a title, a heading); the terms, numbered within the page, and their
 * frequencies, field after field; the positions of the fields that keep them, each term's
 * together in the order of the terms.
 */
export interface AnalysedPage {
  /**
   * The numbering of keys the page's terms were numbered in (`ids`: each page term's number
   * there): its worker's, in its `generation` (it starts again as it grows). The same key has
   * the same number in every page of a numbering, so the thread keeping the postings looks a key
   * up once a numbering, not once a page.
   */
  worker: string;
  generation: number;
  ids: Uint32Array;
  /** The page's keys in the order of its term numbers, joined by KEY_SEPARATOR: one string crosses threads in a copy, an array of thousands one by one (five times the time). */
  keys: string;
  counts: Uint32Array;
  terms: Uint32Array;
  freqs: Uint32Array;
  positions: Uint32Array;
}

/** Between an analysed page's keys (no key holds it: the tokenizers cut words at control characters). */
export const KEY_SEPARATOR = "\u0000";

/** A field's value the same as the previous chunk's: its analysis is not sent again. */
export const SAME_AS_BEFORE = 0xffff_ffff;

/** Past this many keys a worker's numbering starts again (between pages), so that it stays small. */
const KEYS_HELD = 1 << 16;

/** A page as the text index takes its chunks (IndexBuilder.addPage). */
export interface PageChunks {
  title: string;
  sections: { heading: string }[];
  chunks: { section: number; text: string }[];
}

/** A chunk's fields as the text index takes them: its text, its section's heading, its page's title. */
export function chunkFields(page: PageChunks, chunk: number): Record<string, string> {
  const c = page.chunks[chunk]!;
  return { text: c.text, section: page.sections[c.section]?.heading ?? "", title: page.title };
}

/** Analyses pages as the text index takes them, in a parsing worker (D139). */
export class PageAnalyser {
  private numbers: TermNumbers;
  private readonly worker = crypto.randomUUID();
  private generation = 0;
  private local = new Int32Array(1 << 16).fill(-1);
  private readonly keepsPositions: boolean[];

  /** `keysHeld`: past this many keys its numbering starts again (between pages). */
  constructor(
    private readonly options: ShardOptions,
    private readonly keysHeld = KEYS_HELD,
  ) {
    this.numbers = new TermNumbers(options);
    this.keepsPositions = options.fields.map((f) => options.positionFields?.includes(f) ?? false);
  }

  analyse(page: PageChunks): AnalysedPage {
    if (this.numbers.keys.length > this.keysHeld) {
      this.numbers = new TermNumbers(this.options);
      this.generation++;
    }
    const F = this.options.fields.length;
    const keys: string[] = [];
    const ids = new Growable(Uint32Array);
    const counts = new Uint32Array(page.chunks.length * F);
    const terms = new Growable(Uint32Array);
    const freqs = new Growable(Uint32Array);
    const positions = new Growable(Uint32Array);
    const previous: (string | null)[] = new Array(F).fill(null);
    const used: number[] = [];
    for (let c = 0; c < page.chunks.length; c++) {
      const doc = chunkFields(page, c);
      const values = this.options.fields.map((name) => doc[name] ?? "");
      for (let f = 0; f < F; f++) {
        if (values[f] === previous[f]) {
          counts[c * F + f] = SAME_AS_BEFORE;
          continue;
        }
        previous[f] = values[f]!;
        const field = this.numbers.analyse(values[f]!, this.keepsPositions[f] ? positions : undefined);
        counts[c * F + f] = field.terms.length;
        for (const [k, t] of field.terms.entries()) {
          terms.push(this.pageTerm(t, keys, ids, used));
          freqs.push(field.freqs[k]!);
        }
      }
    }
    for (const t of used) this.local[t] = -1;
    // Copied to their size: the buffers grown by doubling would cross whole, to be garbage on the main thread.
    return {
      worker: this.worker,
      generation: this.generation,
      ids: ids.view().slice(),
      keys: keys.join(KEY_SEPARATOR),
      counts,
      terms: terms.view().slice(),
      freqs: freqs.view().slice(),
      positions: positions.view().slice(),
    };
  }

  /** The worker's term t numbered within the page. */
  private pageTerm(t: number, keys: string[], ids: Growable<Uint32Array>, used: number[]): number {
    if (t >= this.local.length) {
      const grown = new Int32Array(Math.max(t + 1, this.local.length * 2)).fill(-1);
      grown.set(this.local);
      this.local = grown;
    }
    let term = this.local[t]!;
    if (term < 0) {
      term = this.local[t] = keys.length;
      const key = this.numbers.keys[t]!;
      if (key.includes(KEY_SEPARATOR))
        throw new Error(`index: the key ${JSON.stringify(key)} holds the separator of a page's keys`);
      keys.push(key);
      ids.push(t);
      used.push(t);
    }
    return term;
  }
}

/** The analyser of a wiki's pages for the text index. */
export function textPageAnalyser(lang: string): PageAnalyser {
  return new PageAnalyser(textShardOptions(lang));
}

/** An analysed page's buffers, to be moved to the thread that keeps the postings rather than copied. */
export function transferOf(page: AnalysedPage): ArrayBuffer[] {
  return [page.ids, page.counts, page.terms, page.freqs, page.positions].map((a) => a.buffer as ArrayBuffer);
}

/**
 * Counts analysed pages' bytes (their arrays and keys) and collects the heap every `bytes` of
 * them: once sent or copied they are garbage the collector does not count as its heap's (they
 * are buffers, or came from another thread), and left to it they piled up to a run's size (D139).
 */
export function collectEvery(bytes: number): (page: AnalysedPage) => void {
  let since = 0;
  return (page) => {
    since += transferOf(page).reduce((n, b) => n + b.byteLength, 2 * page.keys.length);
    if (since < bytes) return;
    since = 0;
    Bun.gc(true);
  };
}
