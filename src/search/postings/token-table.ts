/**
 * Tokens to numbers, for the inversion's one lookup per word: open addressing over the
 * token's UTF-16 code units. A JS Map keyed by fresh token strings took 320 ns a lookup on
 * the English-like corpus (40% of a build's main thread); this table takes about a quarter.
 */
const EMPTY = -1;

export class TokenTable {
  private tokens: (string | undefined)[];
  private hashes: Int32Array;
  private values: Int32Array;
  private mask: number;
  size = 0;

  constructor(capacity = 1 << 16) {
    this.tokens = new Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.values = new Int32Array(capacity).fill(EMPTY);
    this.mask = capacity - 1;
  }

  /** The token's number, or -1. */
  get(token: string): number {
    const hash = hashOf(token);
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const value = this.values[slot]!;
      if (value === EMPTY) return EMPTY;
      if (this.hashes[slot] === hash && this.tokens[slot] === token) return value;
    }
  }

  /** Numbers a token not in the table (value ≥ 0). */
  add(token: string, value: number): void {
    if (2 * (this.size + 1) > this.values.length) this.grow();
    this.place(token, hashOf(token), value);
    this.size++;
  }

  private place(token: string, hash: number, value: number): void {
    let slot = hash & this.mask;
    while (this.values[slot] !== EMPTY) slot = (slot + 1) & this.mask;
    this.tokens[slot] = token;
    this.hashes[slot] = hash;
    this.values[slot] = value;
  }

  private grow(): void {
    const { tokens, hashes, values } = this;
    const capacity = values.length * 2;
    this.tokens = new Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.values = new Int32Array(capacity).fill(EMPTY);
    this.mask = capacity - 1;
    for (let slot = 0; slot < values.length; slot++)
      if (values[slot] !== EMPTY) this.place(tokens[slot]!, hashes[slot]!, values[slot]!);
  }
}

/** FNV-1a over the code units, with murmur3's finaliser to spread the low bits. */
function hashOf(token: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
