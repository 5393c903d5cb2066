/**
 * Text blocks decompressed by the system's libzstd, through one decompression context and
 * the dictionary digested once (a ZSTD_DDict), as zstd's manual advises for many small
 * frames. node:zlib makes a context and loads the 128 KB dictionary anew for every block:
 * 42.4 µs a block of 8.8 KB against 18.2 here at 5M chunks, each into a reused buffer
 * (bench/search/text-blocks.ts), and a search there decompresses about 9 blocks. Where libzstd cannot be loaded, node:zlib does the work.
 */
import { FFIType, type Pointer } from "bun:ffi";
import { firstLibrary } from "../native";
import { zstdDecompressSync } from "node:zlib";
import { SnapshotError } from "./format";

/** What a block was compressed with: a dictionary, or none. */
export type Dictionary = Uint8Array | null;

/**
 * Decompresses a block of a known size; throws when the block is damaged. With `into` (when it
 * has `size` bytes or more), into its first `size` bytes, and returns a view of them: a reused buffer
 * spares the allocation of a new one (7 µs a block of 8.8 KB here: 25.4 µs into new ones
 * against 18.2, bench/search/text-blocks.ts before and after it reused one).
 */
export type BlockDecompressor = (block: Uint8Array, size: number, into?: Uint8Array) => Uint8Array;

const LIBRARIES = ["libzstd.so.1", "libzstd.so", "libzstd.1.dylib", "libzstd.dylib"];

function loadZstd() {
  return firstLibrary(LIBRARIES, {
    ZSTD_createDCtx: { args: [], returns: FFIType.ptr },
    ZSTD_freeDCtx: { args: [FFIType.ptr], returns: FFIType.u64_fast },
    ZSTD_createDDict: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.ptr },
    ZSTD_freeDDict: { args: [FFIType.ptr], returns: FFIType.u64_fast },
    ZSTD_decompress_usingDDict: {
      args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.ptr, FFIType.u64, FFIType.ptr],
      returns: FFIType.u64_fast,
    },
    ZSTD_createCCtx: { args: [], returns: FFIType.ptr },
    ZSTD_freeCCtx: { args: [FFIType.ptr], returns: FFIType.u64_fast },
    ZSTD_createCDict: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.ptr },
    ZSTD_freeCDict: { args: [FFIType.ptr], returns: FFIType.u64_fast },
    ZSTD_compressBound: { args: [FFIType.u64], returns: FFIType.u64_fast },
    ZSTD_compress_usingCDict: {
      args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.ptr, FFIType.u64, FFIType.ptr],
      returns: FFIType.u64_fast,
    },
    ZSTD_isError: { args: [FFIType.u64], returns: FFIType.u32 },
    ZSTD_getErrorName: { args: [FFIType.u64], returns: FFIType.cstring },
  });
}

type Zstd = NonNullable<ReturnType<typeof loadZstd>>;
/** null: not looked for yet; undefined: not there (or not wanted). */
let zstd: Zstd | undefined | null = null;

/** Which decompressor is preferred (the TOME_ZSTD setting, handed down by the command: src/cli/config.ts). */
let preferred: "system" | "node" = "system";

/** Prefers the system libzstd (the default, where one loads) or node:zlib, for the blocks decompressed from now on. */
export function preferZstd(kind: "system" | "node"): void {
  if (kind !== preferred) zstd = null;
  preferred = kind;
}

/** The system libzstd (undefined when none loads, or node:zlib is preferred). */
function systemZstd(): Zstd | undefined {
  if (zstd === null) zstd = preferred === "node" ? undefined : loadZstd();
  return zstd;
}

/** Which zstd decompresses text blocks by default: the system's libzstd, or node:zlib. */
export function zstdInUse(): "system" | "node" {
  return systemZstd() ? "system" : "node";
}

/** The contexts to free once their decompressor is collected (a snapshot replaced by a newer one). */
const contexts = new FinalizationRegistry<{ dctx: Pointer; ddict: Pointer | null }>(({ dctx, ddict }) => {
  const lib = systemZstd()!;
  lib.ZSTD_freeDCtx(dctx);
  if (ddict) lib.ZSTD_freeDDict(ddict);
});

/** A decompressor for blocks compressed with `dictionary`; `via` asks for one implementation (tests and bench/search/text-blocks.ts compare them). */
export function blockDecompressor(dictionary: Dictionary, via = zstdInUse()): BlockDecompressor {
  if (via === "node")
    return (block, size, into) => {
      const bytes = sized(nodeDecompress(block, dictionary), size);
      if (!into || into.byteLength < size) return bytes;
      into.set(bytes);
      return into.subarray(0, size);
    };
  const lib = systemZstd();
  if (!lib) throw new Error("libzstd is not installed (Debian: apt-get install libzstd1)");
  // Typed as bigint too (a 64-bit value); Bun hands pointers to JavaScript as numbers.
  const dctx = lib.ZSTD_createDCtx() as Pointer | null;
  const ddict = dictionary ? (lib.ZSTD_createDDict(dictionary, dictionary.byteLength) as Pointer | null) : null;
  if (!dctx || (dictionary && !ddict))
    throw new Error("libzstd could not make a decompression context (out of memory?)");
  const decompress: BlockDecompressor = (block, size, into) => {
    // Never a buffer shorter than the size libzstd is told it may write.
    const out = into && into.byteLength >= size ? into : new Uint8Array(size);
    const written = lib.ZSTD_decompress_usingDDict(dctx, out, size, block, block.byteLength, ddict);
    if (lib.ZSTD_isError(written))
      throw new SnapshotError(`a text block is damaged: zstd says "${lib.ZSTD_getErrorName(written)}"`);
    return sized(out.subarray(0, Number(written)), size);
  };
  contexts.register(decompress, { dctx, ddict });
  return decompress;
}

/** Compresses a block with the dictionary it was made for (at the level it was made with). */
export type BlockCompressor = (block: Uint8Array) => Uint8Array;

/** The compression contexts to free once their compressor is collected. */
const compressionContexts = new FinalizationRegistry<{ cctx: Pointer; cdict: Pointer }>(({ cctx, cdict }) => {
  const lib = systemZstd()!;
  lib.ZSTD_freeCCtx(cctx);
  lib.ZSTD_freeCDict(cdict);
});

/**
 * A compressor for blocks with `dictionary` at `level`, through the system's libzstd: one context,
 * and the dictionary digested once (a ZSTD_CDict). node:zlib loads the 128 KB dictionary anew for
 * every block, at level 9 about a millisecond an 8 KB block, most of a build's text compression
 * (D112). Undefined where libzstd does not load (node:zlib compresses then).
 */
export function blockCompressor(dictionary: Uint8Array, level: number): BlockCompressor | undefined {
  const lib = systemZstd();
  if (!lib) return undefined;
  const cctx = lib.ZSTD_createCCtx() as Pointer | null;
  const cdict = lib.ZSTD_createCDict(dictionary, dictionary.byteLength, level) as Pointer | null;
  if (!cctx || !cdict) throw new Error("libzstd could not make a compression context (out of memory?)");
  let out = new Uint8Array(0);
  const compress: BlockCompressor = (block) => {
    const bound = Number(lib.ZSTD_compressBound(block.byteLength));
    if (out.byteLength < bound) out = new Uint8Array(bound);
    const written = lib.ZSTD_compress_usingCDict(cctx, out, bound, block, block.byteLength, cdict);
    if (lib.ZSTD_isError(written))
      throw new Error(`zstd could not compress a text block: "${lib.ZSTD_getErrorName(written)}"`);
    return out.slice(0, Number(written));
  };
  compressionContexts.register(compress, { cctx, cdict });
  return compress;
}

function nodeDecompress(block: Uint8Array, dictionary: Dictionary): Uint8Array {
  try {
    return dictionary ? zstdDecompressSync(block, { dictionary }) : Bun.zstdDecompressSync(block);
  } catch (error) {
    throw new SnapshotError(`a text block is damaged: zstd says "${(error as Error).message}"`);
  }
}

function sized(bytes: Uint8Array, size: number): Uint8Array {
  if (bytes.byteLength !== size)
    throw new SnapshotError(`a text block is damaged: it holds ${bytes.byteLength} bytes, its chunks end at ${size}`);
  return bytes;
}
