/** snapshot: the file the service is served from. Written as a stream by the build, mapped at boot. */
export { FORMAT_VERSION } from "./container";
export { redirectListOf, SNAPSHOT_EXTENSION, SNAPSHOT_MAGIC, SnapshotError, SnapshotReplaced } from "./format";
export type {
  AppliedUpdate,
  Redirect,
  RedirectList,
  SnapshotChunk,
  SnapshotMeta,
  SnapshotPage,
  SnapshotSection,
  SourceReport,
  Wiki,
} from "./format";
export { eachRedirect, openSnapshot, readSnapshotMeta, type Snapshot } from "./read";
export { SnapshotWriter, type PageInput, type RedirectIds } from "./write";
export { format1Modifications, readFormat1 } from "./format1";
export { Growable, lowerBound, StoredStrings, StringColumn, viewOf } from "../columns";
export {
  ContainerWriter,
  damagedSections,
  MAX_SECTION_BYTES,
  openContainer,
  openForWriting,
  type Container,
} from "./container";
export { beingWritten, type LeaseRefused } from "./mapping";
export { checkSections, sectionsDamaged, type SectionsChecked } from "./check";
export { Spool } from "./spool";
export { PageTable, isoSeconds, timeOrder, type PageRow } from "./pages";
export { compressTextBlock, TextStore, TextWriter, textDictionaryOf } from "./text";
export { blockDecompressor, preferZstd, zstdInUse } from "./zstd";
export { isSnapshotName } from "../files";
export {
  bySnapshotOrder,
  identityOf,
  isSnapshotFile,
  latestSnapshot,
  pageDates,
  snapshotFile,
  snapshotsIn,
  type SkippedFile,
  type SnapshotFile,
} from "./locate";
export { sameBytes, sha256 } from "./hash";
