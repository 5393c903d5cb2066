/**
 * A system library through Bun's FFI: the first of its names that loads (a library's file is named differently from
 * one system to the next), or undefined where none does. Libc for the snapshot's mappings (D80, D207) and the
 * allocator's restart (D209); libzstd for the text blocks (D112).
 */
import { dlopen, type FFIFunction } from "bun:ffi";

/** Linux's C library: glibc's, then musl's. */
export const LIBC = ["libc.so.6", "libc.so"] as const;

/** The symbols of the first of `names` that loads with them, or undefined. */
export function firstLibrary<Fns extends Record<string, FFIFunction>>(names: readonly string[], symbols: Fns) {
  for (const name of names) {
    try {
      return dlopen(name, symbols).symbols;
    } catch {}
  }
  return undefined;
}
