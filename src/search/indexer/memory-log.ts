/**
 * The build's memory, phase by phase, on stderr when asked (TOME_DEBUG_MEM, read by
 * src/cli/config.ts and handed down by setMemoryLog): what finding
 * where a peak comes from needs (private and file-backed resident bytes, the JS heap).
 */
import { readFileSync } from "node:fs";

let enabled = false;
/** "gc": a full collection before each reading, so that the heap figures are what is live. */
let collect = false;

export function setMemoryLog(mode: "off" | "on" | "gc"): void {
  enabled = mode !== "off";
  collect = mode === "gc";
}
const started = performance.now();

export function logMemory(phase: string): void {
  if (!enabled) return;
  if (collect) Bun.gc(true);
  let status = "";
  try {
    status = readFileSync("/proc/self/status", "utf8");
  } catch {
    return;
  }
  const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024);
  const heap = process.memoryUsage();
  const s = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `[mem ${s}s] ${phase}: anon ${mb("RssAnon")} MB, file ${mb("RssFile")} MB, hwm ${mb("VmHWM")} MB, heap ${Math.round(heap.heapUsed / 1e6)}/${Math.round(heap.heapTotal / 1e6)} MB, external ${Math.round(heap.external / 1e6)} MB, arrayBuffers ${Math.round(heap.arrayBuffers / 1e6)} MB\n`,
  );
}
