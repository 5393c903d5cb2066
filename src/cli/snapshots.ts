/**
 * The snapshots folder every command reads (D86): start serves the best snapshot there and keeps
 * the sample it builds on a first run there; mcp and snapshot:export read the same one. The
 * sample comes after every other snapshot, whatever its data's age: a snapshot built or copied
 * into the folder is served before it, and the server serving it moves to that one (even of
 * another wiki).
 */
import { basename } from "node:path";
import { bySnapshotOrder, type SkippedFile, type SnapshotFile, snapshotsIn } from "../snapshot";
import { SNAPSHOT_DIR } from "./config";

/** The sample's file name in the folder (built from test/fixtures/data/dumps/enwiki-2016-sample.xml.bz2). */
export const SAMPLE_NAME = "enwiki-2016-sample.tome";

export const isSample = (path: string): boolean => basename(path) === SAMPLE_NAME;

/** D55's order (the newest data first), with the sample last. */
export function servingOrder(a: SnapshotFile, b: SnapshotFile): number {
  return Number(isSample(a.path)) - Number(isSample(b.path)) || bySnapshotOrder(a, b);
}

/** The snapshots of a folder that open, best first (servingOrder), and the files skipped. */
export function snapshotsToServe(dir: string): { usable: SnapshotFile[]; skipped: SkippedFile[] } {
  const { usable, skipped } = snapshotsIn(dir);
  return { usable: usable.sort(servingOrder), skipped };
}

/** The snapshot a command reads when none is named: TOME_SNAPSHOT, else the best of snapshots/. */
export function snapshotToRead(pinned: string | undefined): string | undefined {
  return pinned || snapshotsToServe(SNAPSHOT_DIR).usable[0]?.path;
}
