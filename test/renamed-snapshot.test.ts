/**
 * A snapshot whose path is opened twice, once for its header and table and again for its sections (the mapping, a
 * section read, Bun.mmap by path): another snapshot renamed onto the path in between (an operator's `mv` of a new one,
 * a build's rename) gave a container whose header came from one file and whose sections from the other (D84). The
 * container now refuses any open of its path that finds another file (device and inode), whoever opens it.
 */
import { afterEach, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import { join } from "node:path";
import { runExport } from "../src/cli/export-run";
import { open } from "../src/search";
import { openContainer, SnapshotError } from "../src/snapshot";
import { FileMapping } from "../src/snapshot/mapping";
import { EN_2016, snapshotFor, SQUAD, tempDir } from "./helpers";

setDefaultTimeout(120_000);

const replaced = (path: string) =>
  `${path} was replaced by another file (one renamed onto it?) while it was being opened: nothing was read from it. Try again.`;

/** A folder with a copy of the SQUAD snapshot at `path`, and the English sample's snapshot beside it, to rename onto it. */
async function twoSnapshots() {
  const dir = tempDir();
  const path = join(dir, "served.tome");
  const other = join(dir, "other.tome");
  fs.copyFileSync(await snapshotFor({ dumps: [SQUAD] }), path);
  fs.copyFileSync(await snapshotFor({ dumps: [EN_2016] }), other);
  return { dir, path, other };
}

/** Renames `other` onto `path` when `path` is opened to be read for the `nth` time (1: the header's open). */
function renameAtOpen(path: string, other: string, nth: number) {
  const real = fs.openSync;
  let opens = 0;
  return spyOn(fs, "openSync").mockImplementation(((...args: Parameters<typeof fs.openSync>) => {
    if (args[0] === path && (args[1] === "r" || args[1] === undefined) && ++opens === nth) fs.renameSync(other, path);
    return real(...args);
  }) as typeof fs.openSync);
}

let spy: ReturnType<typeof renameAtOpen> | undefined;
afterEach(() => {
  spy?.mockRestore();
  spy = undefined;
});

describe("another snapshot renamed onto the path between a container's opens", () => {
  test("is refused when a section is mapped, and when one is read", async () => {
    const { dir, path, other } = await twoSnapshots();
    const mapped = openContainer(path);
    fs.renameSync(other, path);
    expect(() => mapped.section("pages.ts")).toThrow(replaced(path));
    // read(): a look at a file not served (the folder's listing reads pages.ts so), which opens the path each time.
    fs.copyFileSync(await snapshotFor({ dumps: [SQUAD] }), join(dir, "squad.tome"));
    const read = openContainer(join(dir, "squad.tome"));
    fs.renameSync(path, join(dir, "squad.tome"));
    expect(() => read.read("pages.ts")).toThrow(replaced(join(dir, "squad.tome")));
  });

  // The mapping's open is FileMapping's openSync, on Linux only: elsewhere open() maps by path (Bun.mmap), no second open.
  test.if(process.platform === "linux")(
    "is refused by the library's open(), between its header's open and its mapping's",
    async () => {
      const { path, other } = await twoSnapshots();
      spy = renameAtOpen(path, other, 2);
      expect(() => open(path)).toThrow(replaced(path));
      spy.mockRestore();
      // Opened again, it is the file now there, whole.
      const engine = open(path);
      expect(engine.snapshot.meta.wiki.host).toBe("en.wikipedia.org");
      engine.close();
    },
  );

  test("where sections are mapped by path (Bun.mmap, off Linux), it is refused before anything of it is mapped", async () => {
    const { path, other } = await twoSnapshots();
    const opens = spyOn(FileMapping, "open").mockReturnValue(undefined);
    const mmap = spyOn(Bun, "mmap");
    try {
      const container = openContainer(path);
      expect(container.section("pages.ts").length).toBeGreaterThan(0);
      expect(mmap).toHaveBeenCalledTimes(1);
      fs.renameSync(other, path);
      // Mapped first and refused after, the other file's bytes stayed mapped until a collection, released by no one.
      expect(() => container.section("pages.id")).toThrow(replaced(path));
      expect(mmap).toHaveBeenCalledTimes(1);
    } finally {
      opens.mockRestore();
      mmap.mockRestore();
    }
  });

  test("removed in between instead, it is said so (a SnapshotError), not as the open's ENOENT", async () => {
    const { path } = await twoSnapshots();
    const opened = openContainer(path);
    fs.rmSync(path);
    const said = (read: () => unknown) => {
      try {
        read();
        return "read";
      } catch (err) {
        return `${err instanceof SnapshotError} ${(err as Error).message}`;
      }
    };
    const removed = `true ${path} was removed while it was being opened: nothing was read from it.`;
    expect(said(() => opened.read("pages.ts"))).toBe(removed);
    expect(said(() => opened.mapAll())).toBe(removed);
  });

  test("snapshot:export checks the file it exports, not the one renamed onto its path before its check", async () => {
    const { dir, path, other } = await twoSnapshots();
    // The file opened has a damaged page table (dates read as they are); the one renamed onto its path is whole.
    fs.copyFileSync(await snapshotFor({ dumps: [SQUAD] }), other);
    const pages = openContainer(path).sections.find((s) => s.name === "pages.ts")!;
    const bytes = fs.readFileSync(path);
    bytes[pages.offset + 3]! ^= 0xff;
    fs.writeFileSync(path, bytes);
    const out = join(dir, "chunks.jsonl");
    // After the export has opened the snapshot, when it looks at --out (outputKind), the whole copy is put in place.
    const realLstat = fs.lstatSync;
    let renamed = false;
    const hook = spyOn(fs, "lstatSync").mockImplementation(((...args: Parameters<typeof fs.lstatSync>) => {
      if (args[0] === out && !renamed) {
        renamed = true;
        fs.renameSync(other, path);
      }
      return realLstat(...args);
    }) as typeof fs.lstatSync);
    try {
      const said = await runExport({ snapshot: path, out, since: 0 }).then(
        () => "written",
        (e: Error) => e.message,
      );
      expect({ renamed, said }).toEqual({
        renamed: true,
        said: `${path}: section(s) pages.ts do not match their hash, so its text may be altered. Nothing was written: check it with bun run snapshot:verify ${path}, then copy or build it again.`,
      });
    } finally {
      hook.mockRestore();
    }
    expect(fs.existsSync(out)).toBe(false);
  });
});
