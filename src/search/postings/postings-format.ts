/**
 * Postings lists, block-compressed as Lucene and Tantivy keep them (bit-packed blocks with
 * exceptions, PFOR), so that a shard's postings take about 1.1 bytes each with their term
 * frequencies (1.5 as varints, codec 1) and can be read from a mapped file.
 *
 * A list holds, for one (term, field), document numbers in increasing order, each with its
 * term frequency (1..255) and optionally its word positions. Documents go in blocks of 128
 * (the last block of a list may be shorter). A list of 128 documents or more starts with skip
 * data, one entry per block in fixed-width arrays (so a document is found by binary search):
 * the block's last document, where its documents and positions start, and its impact; then
 * the impacts of every run of COARSE blocks. A shorter list has no skip data, only its impact.
 *
 * An impact (D90) is a (tf, length) pair: of the block's postings, the one with the highest tf
 * over its field length's BM25 norm (ShardReader.norms, from the shard's own field lengths), so
 * that what any posting of the block can add to a BM25F score is known without decoding it (as
 * Lucene's and Tantivy's block impacts). Lists written without norms (a run before its merge)
 * keep the block's greatest tf at length 0: a bound too, looser.
 *
 *   list  := varint(df·2 + hasPositions) (long | short)
 *   short := u8 impactTf | u16 impactLength | docs(block 0) positions(block 0)   (positions start where docs end)
 *   long  := pad to 4 bytes | u32 docsLength | u32 lastDoc[B] | u32 docsStart[B]
 *            | [u32 positionsStart[B] if hasPositions] | u16 impactLength[B] | u16 coarseLength[C]
 *            | u8 impactTf[B] | u8 coarseTf[C] | docs[B] | positions[B]
 * (C = ⌈B / COARSE⌉; docsStart from the first block's documents, positionsStart from the first
 * block's positions; u16s little-endian).
 *
 * A block of n documents, each gap the distance from the previous document (the list's
 * first from −1):
 *   n < 4:  per document varint((gap − 1)·2 + (tf > 1)), then a byte for tf when tf > 1
 *   n ≥ 4:  packed(gap − 1 for each document) packed(tf − 1 for each document)
 * A block's positions (token indexes within the field, increasing per document): first, for
 * each document whose tf is 255 (tf is capped there), varint(its number of positions − 255);
 * then the values of all its documents in a row (each document's first position, then each
 * gap − 1 to its next), in runs of 128 values (the last run shorter): a run of fewer than 4
 * values as varints, else packed.
 *
 *   packed(m values) := u8 token = width | (128 if exceptions) | ⌈m·width/8⌉ bytes: each value's
 *                       low `width` bits, least significant bit first
 *                       | [u8 e | e × (u8 index, varint(value >>> width)) if exceptions]
 * The width (0..32) is chosen per packed run for the fewest bytes: values wider than it are
 * exceptions, their high bits patched in. A width of 0 with no exceptions (all tfs 1) costs
 * the token alone.
 *
 * The codec is part of the index layout recorded in each shard's meta (indexLayout,
 * store.ts: 1 was varints only): a file of another layout is refused with how to rebuild
 * it, never misread.
 *
 * The bytes come in parts of less than 4 GiB (JavaScriptCore's ArrayBuffer limit); a list
 * never straddles two. A list's address is part · 2^32 + its offset in the part.
 */

export const BLOCK = 128;
/** Blocks a coarse impact covers (Lucene keeps a second level of impacts too). */
export const COARSE = 32;

/** The bytes of a long list's skip data: per block its last document, starts and impact; per COARSE blocks an impact. */
export function skipBytes(blocks: number, positions: boolean): number {
  return blocks * (positions ? 15 : 11) + Math.ceil(blocks / COARSE) * 3;
}
export const MAX_TF = 255;
export const PART_BYTES = 2 ** 32;
/** Document numbers stay below 2^31, so that decoding is all 32-bit integer arithmetic. */
export const MAX_DOC = 2 ** 31 - 1;
/** Positions are held in Uint32Arrays. */
export const MAX_POSITION = 2 ** 32 - 1;
/** Parts are mapped 8-byte aligned: the skip arrays are read as Uint32 words. */
export const ALIGN = 4;
/** Blocks and position runs of fewer values are varints: a packed run's token costs more than it saves there. */
export const PACKED_FROM = 4;
/** Positions per packed run (an exception's index fits a byte). */
export const RUN = 128;
export const EXCEPTIONS = 128;

/**
 * Receives the written bytes in order, part by part: bytes[0, length), only valid during the
 * call (a buffer and a length rather than a subarray, which would be an object per list).
 */
export type PostingsSink = (part: number, bytes: Uint8Array, length: number) => void;
