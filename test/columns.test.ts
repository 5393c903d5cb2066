import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Packr } from "msgpackr";
import {
  ContainerWriter,
  openContainer,
  redirectListOf,
  StoredStrings,
  StringColumn,
  type Redirect,
} from "../src/snapshot";
import { writeRedirects } from "../src/snapshot/write";
import { tempDir } from "./helpers";
import { Growable, grownLength, StringFile } from "../src/columns";
import { existsSync, statSync } from "node:fs";
import { EN_2016, ingested } from "./helpers";

describe("columns trimmed", () => {
  test("a column trimmed keeps its values and strings, and lets go the room it grew by", () => {
    const numbers = new Growable(Uint32Array, 4);
    for (let i = 0; i < 5; i++) numbers.push(i * 7);
    const strings = new StringColumn(8, 2);
    for (const s of ["Tōkyō", "", "Zürich", "\u{1f600}x"]) strings.push(s);
    const bytesBefore = strings.blob().slice();
    numbers.trim();
    strings.trim();
    expect(Array.from(numbers.view())).toEqual([0, 7, 14, 21, 28]);
    expect(numbers.view().buffer.byteLength).toBe(5 * 4);
    expect(strings.blob()).toEqual(bytesBefore);
    expect(strings.blob().buffer.byteLength).toBe(bytesBefore.length);
    expect(strings.ends.view().buffer.byteLength).toBe(4 * 4);
    const stored = new StoredStrings(strings.blob(), strings.ends.view());
    expect(Array.from({ length: 4 }, (_, i) => stored.at(i))).toEqual(["Tōkyō", "", "Zürich", "\u{1f600}x"]);
    // Still a column: it grows again.
    numbers.push(35);
    expect(numbers.get(5)).toBe(35);
    const empty = new Growable(Float64Array);
    empty.trim();
    empty.push(1.5);
    expect(Array.from(empty.view())).toEqual([1.5]);
  });
});

describe("columns grown", () => {
  test("a column doubles while small, then grows by half: past a million values it holds at most half again its values", () => {
    expect(grownLength(0)).toBe(16);
    expect(grownLength(1024)).toBe(2048);
    expect(grownLength(1 << 20)).toBe(3 << 19);
    const column = new Growable(Uint32Array);
    const count = (1 << 21) + 1;
    for (let i = 0; i < count; i++) column.push(i);
    const room = column.view().buffer.byteLength / 4;
    expect(room).toBeGreaterThanOrEqual(count);
    expect(room).toBeLessThanOrEqual(count * 1.5);
    expect(column.get(0)).toBe(0);
    expect(column.get(count - 1)).toBe(count - 1);
    expect(column.get(1 << 20)).toBe(1 << 20);
  });
});

describe("strings in a file", () => {
  test("a StringFile gives back its strings in order and out of order (long ones too) from its file, which close() removes", async () => {
    const r = await ingested({ dumps: [EN_2016] });
    // A fixture's redirects' titles and targets, and strings longer than its read window and its write buffer.
    const strings = r.redirects.flatMap((x) => [x.title, x.target]);
    strings.splice(5, 0, "Ω".repeat(3000), "", "Zürich".repeat(20_000));
    expect(strings.length).toBeGreaterThan(200);
    const path = join(tempDir(), "strings");
    const file = new StringFile(path);
    const encoder = new TextEncoder();
    for (const s of strings) file.pushBytes(encoder.encode(s));
    file.trim();
    expect(file.length).toBe(strings.length);
    const order = strings.map((_, i) => i);
    const shuffled = order.map((i) => (i * 7919) % strings.length);
    expect(new Set(shuffled).size).toBe(strings.length);
    for (const sequence of [order, [...order].reverse(), shuffled])
      expect(sequence.map((i) => file.at(i))).toEqual(sequence.map((i) => strings[i]!));
    // The strings are in the file, not held: its size is their bytes.
    expect(statSync(path).size).toBe(strings.reduce((n, s) => n + encoder.encode(s).length, 0));
    file.close();
    expect(existsSync(path)).toBe(false);
    expect(() => file.at(0)).toThrow("read after it was closed");
  }, 120_000);
});

describe("stored strings", () => {
  test("compareAsStrings and compare order stored strings as JS compares the strings (UTF-16 units, not code points)", () => {
    // U+FF21 sorts after U+1F600 in UTF-8 and code point order, before it in JS order (a surrogate pair starts with 0xD83D).
    const strings = [
      "",
      "a",
      "ab",
      "b",
      "Ä",
      "\uff21",
      "\u{1f600}",
      "\u{1f600}a",
      "\u{1f601}",
      "\ue000",
      "z\u{10000}",
      "z\uffff",
      "Éa",
      "É",
      "abc",
      "ab\u00ff",
    ];
    const column = new StringColumn();
    for (const s of strings) column.push(s);
    const stored = new StoredStrings(column.blob(), column.ends.view());
    const jsOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    // And against another column (its strings in another order).
    const others = [...strings].reverse();
    const otherColumn = new StringColumn();
    for (const s of others) otherColumn.push(s);
    const other = new StoredStrings(otherColumn.blob(), otherColumn.ends.view());
    for (let i = 0; i < strings.length; i++) {
      for (let j = 0; j < strings.length; j++) {
        expect({ a: strings[i], b: strings[j], order: Math.sign(stored.compareAsStrings(i, j)) }).toEqual({
          a: strings[i],
          b: strings[j],
          order: jsOrder(strings[i]!, strings[j]!),
        });
        expect({ a: strings[i], b: others[j], order: Math.sign(stored.compareAsStrings(i, j, other)) }).toEqual({
          a: strings[i],
          b: others[j],
          order: jsOrder(strings[i]!, others[j]!),
        });
        // compare() against a JS string decodes the same way.
        expect({ a: strings[i], b: strings[j], order: Math.sign(stored.compare(i, strings[j]!)) }).toEqual({
          a: strings[i],
          b: strings[j],
          order: jsOrder(strings[i]!, strings[j]!),
        });
      }
    }
  });
});

describe("the redirects section", () => {
  test("written a redirect at a time, it is the bytes packr.pack makes of the whole list", () => {
    const packr = new Packr({ useRecords: false, moreTypes: false });
    const dir = tempDir();
    const long = "Ω".repeat(700_000);
    // The array's header has three forms (below 16, below 65,536, above); one title outgrows the write batch.
    for (const n of [0, 3, 20, 70_000]) {
      const redirects: Redirect[] = Array.from({ length: n }, (_, i) => ({
        title: i === 7 ? long : `Redirect ${i} é`,
        target: `Target \u{1f600} ${i % 13}`,
      }));
      const path = join(dir, `r${n}.bin`);
      const out = new ContainerWriter(path);
      writeRedirects(out, redirectListOf(redirects));
      out.finish({});
      expect(Buffer.from(openContainer(path).section("redirects")).equals(packr.pack(redirects))).toBe(true);
    }
  });
});
