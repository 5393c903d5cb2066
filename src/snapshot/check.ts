/** A file's sections checked against their hashes by a reader of its own: snapshot:verify, an export, an update's base. */
import { openContainer } from "./container";

/** The sections whose bytes do not match their hash, worded as every check says it (none: undefined). */
export function sectionsDamaged(names: string[]): string | undefined {
  return names.length ? `section(s) ${names.join(", ")} do not match their hash` : undefined;
}

/** What checkSections found: the damage worded (undefined: whole), and the file's sections and bytes. */
export interface SectionsChecked {
  /** `section(s) a, b do not match their hash`, or undefined when every section checked matches. */
  damage: string | undefined;
  /** The file's sections (all of them, checked or not) and its length in bytes. */
  sections: number;
  bytes: number;
}

/**
 * Checks the sections of the file at `path` against the sha256 its table records, through a mapping of its own (not
 * a served one) under a read lease (a writer stops it, D84): its pages leave the resident set as they are hashed (verify's readOnce), and the file is let go on
 * every path, whole, damaged, stopped by `signal` (which throws its reason) or failed. `only`: the sections checked, by
 * name (all when absent); `progress`: called with the bytes hashed and the bytes to hash.
 */
export async function checkSections(
  path: string,
  {
    only,
    signal,
    progress,
  }: {
    only?: ((name: string) => boolean) | undefined;
    signal?: AbortSignal | undefined;
    progress?: (done: number, total: number) => void;
  } = {},
): Promise<SectionsChecked> {
  // Stopped before it began: a small file would be hashed whole before the first pause looked at the signal.
  signal?.throwIfAborted();
  const container = openContainer(path);
  try {
    container.leaseForReading();
    const damaged = await container.verify(progress, { readOnce: true, signal, only });
    return {
      damage: sectionsDamaged(damaged),
      sections: container.sections.length,
      bytes: container.bytes,
    };
  } finally {
    container.letGo();
  }
}
