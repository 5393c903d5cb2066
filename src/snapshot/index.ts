/** snapshot: the file the service is served from. Built from an ingest result, loaded at boot. */
export { FORMAT_VERSION, SNAPSHOT_EXTENSION, SnapshotError } from "./format";
export type { Snapshot, SnapshotMeta, SnapshotPage } from "./format";
export { decodeSnapshot, readSnapshot, readSnapshotMeta } from "./read";
export { encodeSnapshot, fromIngest, writeSnapshot } from "./write";
export { latestSnapshot } from "./locate";
export { sameBytes, sha256 } from "./hash";
