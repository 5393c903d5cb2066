/**
 * Where each term's postings lists are: one entry per list that exists, none for the fields a
 * term is not in. Most terms are in one field of three; a table with a slot for every (term,
 * field) took 12 bytes a slot, 31 bytes a chunk at 5M chunks, two thirds of them empty.
 *
 *   fields[t]  bit f set: term t has a list in field f
 *   first[t]   the index of term t's first list; its others follow in field order
 *   at[i]      list i's address in the postings (postings.ts)
 *   df[i]      list i's document count
 */

export interface TermListsData {
  first: Uint32Array;
  fields: Uint8Array;
  at: Float64Array;
  df: Uint32Array;
}

/** The bits set in a byte (a term's field mask). */
const BITS = Uint8Array.from({ length: 256 }, (_x, m) => {
  let n = 0;
  for (let v = m; v; v &= v - 1) n++;
  return n;
});

export class TermLists {
  private readonly first: Uint32Array;
  private readonly fields: Uint8Array;
  private readonly addresses: Float64Array;
  private readonly counts: Uint32Array;

  constructor(data: TermListsData) {
    this.first = data.first;
    this.fields = data.fields;
    this.addresses = data.at;
    this.counts = data.df;
  }

  /** The index of term t's list in field f, -1 when it has none. */
  index(term: number, field: number): number {
    const mask = this.fields[term]!;
    if (!((mask >>> field) & 1)) return -1;
    return this.first[term]! + BITS[mask & ((1 << field) - 1)]!;
  }

  /** The document count of term t's list in field f (0: no list). */
  df(term: number, field: number): number {
    const i = this.index(term, field);
    return i < 0 ? 0 : this.counts[i]!;
  }

  /** List i's document count (i from index()). */
  count(i: number): number {
    return this.counts[i]!;
  }

  /** List i's address in the postings (i from index()). */
  address(i: number): number {
    return this.addresses[i]!;
  }

  /** The document counts of term t's lists, all fields together. */
  total(term: number): number {
    const first = this.first[term]!;
    const end = first + BITS[this.fields[term]!]!;
    let sum = 0;
    for (let i = first; i < end; i++) sum += this.counts[i]!;
    return sum;
  }
}

/** Where the writer appends: growable columns in memory, or spools on disk. */
export type TermListsColumns = Record<keyof TermListsData, { push(v: number): void }>;

/** Appends the lists of terms in term order. */
export class TermListsWriter {
  private lists = 0;
  constructor(private readonly out: TermListsColumns) {}

  /** The next term's lists: for each field f, its address at[f] and document count df[f] (0: none). */
  add(at: ArrayLike<number>, df: ArrayLike<number>): void {
    if (df.length > 8) throw new Error(`term lists: ${df.length} fields, at most 8 fit a term's mask`);
    let mask = 0;
    this.out.first.push(this.lists);
    for (let f = 0; f < df.length; f++) {
      if (!df[f]) continue;
      mask |= 1 << f;
      this.out.at.push(at[f]!);
      this.out.df.push(df[f]!);
      this.lists++;
    }
    this.out.fields.push(mask);
  }
}
