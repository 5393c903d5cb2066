import { Unpackr } from "msgpackr";
import { sameBytes, sha256 } from "./hash";
import { FORMAT_VERSION, HEADER_BYTES, MAGIC, type Snapshot, type SnapshotContent, SnapshotError, type SnapshotMeta } from "./format";

const unpackr = new Unpackr({ useRecords: true, moreTypes: false });

interface Header {
  version: number;
  metaLength: number;
  contentLength: number;
  checksum: Uint8Array;
}

function readHeader(path: string, bytes: Uint8Array): Header {
  const rebuild = "Rebuild it with `bun run snapshot:build`.";
  if (bytes.byteLength < HEADER_BYTES || new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC) {
    throw new SnapshotError(`${path} is not a Tome snapshot (no TOMESNAP header). ${rebuild}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== FORMAT_VERSION) {
    throw new SnapshotError(`${path} has snapshot format ${version}; this Tome reads format ${FORMAT_VERSION}. ${rebuild}`);
  }
  const metaLength = Number(view.getBigUint64(16, true));
  const contentLength = Number(view.getBigUint64(24, true));
  const expected = HEADER_BYTES + metaLength + contentLength;
  if (bytes.byteLength !== expected) {
    throw new SnapshotError(
      `${path} is ${bytes.byteLength < expected ? "truncated" : "longer than its header says"}: ${bytes.byteLength} bytes, expected ${expected}. ${rebuild}`,
    );
  }
  return { version, metaLength, contentLength, checksum: bytes.subarray(32, 64) };
}

function verify(path: string, bytes: Uint8Array, header: Header): void {
  if (!sameBytes(sha256(bytes.subarray(HEADER_BYTES)), header.checksum)) {
    throw new SnapshotError(`${path} is corrupt: its checksum does not match its content. Rebuild it with \`bun run snapshot:build\`.`);
  }
}

async function readBytes(path: string): Promise<Uint8Array> {
  const file = Bun.file(path);
  if (!(await file.exists())) {
    throw new SnapshotError(`snapshot not found: ${path}. Build one with \`bun run snapshot:build --dump <path|url>\`.`);
  }
  return new Uint8Array(await file.arrayBuffer());
}

/** Loads and verifies a whole snapshot. A truncated or altered file is refused, never half-loaded. */
export async function readSnapshot(path: string): Promise<Snapshot> {
  return decodeSnapshot(path, await readBytes(path));
}

export function decodeSnapshot(path: string, bytes: Uint8Array): Snapshot {
  const header = readHeader(path, bytes);
  verify(path, bytes, header);
  try {
    const meta = unpackr.unpack(bytes.subarray(HEADER_BYTES, HEADER_BYTES + header.metaLength)) as SnapshotMeta;
    const content = unpackr.unpack(bytes.subarray(HEADER_BYTES + header.metaLength)) as SnapshotContent;
    return { meta, pages: content.pages, redirects: content.redirects };
  } catch (err) {
    throw new SnapshotError(`${path} cannot be decoded (${(err as Error).message}). Rebuild it with \`bun run snapshot:build\`.`);
  }
}

/** Reads only the metadata (the header is checked, the content is not). */
export async function readSnapshotMeta(path: string): Promise<SnapshotMeta> {
  const bytes = await readBytes(path);
  const header = readHeader(path, bytes);
  return unpackr.unpack(bytes.subarray(HEADER_BYTES, HEADER_BYTES + header.metaLength)) as SnapshotMeta;
}
