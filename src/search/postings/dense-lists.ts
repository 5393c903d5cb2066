/**
 * The text shard's most common lists a second time, dense (D90): for each list holding
 * DENSE_SHARE of the chunks or more, a byte a chunk, its tf there (0: the chunk does not hold
 * it), written by the merge beside the postings. A conjunction or a page's optional words ask
 * such a list chunk by chunk: a byte read instead of a block decoded and searched. At 1M
 * chunks, 43 lists (the function words): 43 bytes a chunk.
 *
 *   `${prefix}.dense.addresses`  f64 per list: its address in the postings
 *   `${prefix}.dense.tfs`        documentCount bytes per list, in the same order
 */
export const DENSE_SHARE = 1 / 4;

export class DenseLists {
  private readonly byAddress = new Map<number, Uint8Array>();

  constructor(addresses: Float64Array, tfs: Uint8Array, documents: number) {
    for (let i = 0; i < addresses.length; i++)
      this.byAddress.set(addresses[i]!, tfs.subarray(i * documents, (i + 1) * documents));
  }

  /** The list's tfs a chunk, when it is one of the dense ones. */
  of(address: number): Uint8Array | undefined {
    return this.byAddress.get(address);
  }

  get size(): number {
    return this.byAddress.size;
  }
}
