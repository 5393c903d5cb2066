/**
 * Search hits as served: the crop and highlight of highlight.ts against a plain reading of D9
 * (tokens() for the words, code points counted with Array.from), over every chunk of the
 * shared dumps; the highlight of typo and prefix expansions (asked of the index only for the
 * words a hit's text has); and search answers against their TypeBox schema, which Elysia
 * no longer checks on each answer (docs.ts, `checked: false`).
 */
import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import { queryMix } from "../bench/queries";
import { createApp } from "../src/http";
import { SearchResponse } from "../src/http/schemas";
import { CROP_MARKER, escapeHtml, fold, tokens, type Engine } from "../src/search";
import { formatText, formatTitle, type MatchedTerms } from "../src/search/text/highlight";
import { indexKey } from "../src/search/text/analyze";
import { chunkTextsOf, EN_2006, EN_2016, engineFor, TRUNCATED_XZ } from "./helpers";

const en = () => engineFor({ dumps: [EN_2006, EN_2016] });
const ja = () => engineFor({ dumps: [TRUNCATED_XZ[3]!], allowTruncated: true });
/** Words with joiners inside (D120). */
const mr = () => engineFor({ dumps: [TRUNCATED_XZ[4]!], allowTruncated: true });
/** Words with apostrophes inside (D120). */
const uk = () => engineFor({ dumps: [TRUNCATED_XZ[5]!], allowTruncated: true });

const terms = (set: Set<string>): MatchedTerms => ({ candidates: set, has: (t) => set.has(t) });

/** tokens(), kept for the last text: chunkCases and the reference read each chunk four times (Japanese's segmenter is slow). */
const tokensOf = (() => {
  let last: { text: string; lang: string; words: ReturnType<typeof tokens> } | undefined;
  return (text: string, lang: string) => {
    if (last?.text !== text || last.lang !== lang) last = { text, lang, words: tokens(text, lang) };
    return last.words;
  };
})();

/** D9 read plainly (D95): the words (tokens()), the window of crop code points with the most distinct matched terms then the most matched words, cut at words, matched words in <em>. */
function reference(text: string, matched: Set<string>, crop: number, highlight: boolean, lang: string): string {
  const words = tokensOf(text, lang).map((t) => ({ ...t, hit: matched.has(t.term) }));
  // UTF-16 offset → code-point offset, a high surrogate and the unit after it counting as one.
  const cp: number[] = [];
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    cp[i] = n;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) cp[++i] = n;
    n++;
  }
  cp[text.length] = n;
  const render = (from: number, to: number) => {
    let out = "";
    let at = from;
    for (const w of words) {
      if (!highlight || !w.hit || w.end <= from || w.start >= to) continue;
      out += `${escapeHtml(text.slice(at, w.start))}<em>${escapeHtml(text.slice(w.start, w.end))}</em>`;
      at = w.end;
    }
    return out + escapeHtml(text.slice(at, to));
  };
  if (n <= crop) return render(0, text.length);
  const hits = words.filter((w) => w.hit);
  // The window holding the most distinct matched terms, then the most matched words (D95).
  let best = 0;
  let bestCount = 0;
  let bestDistinct = 0;
  for (let i = 0; i < hits.length; i++) {
    let j = i;
    while (j < hits.length && cp[hits[j]!.end]! - cp[hits[i]!.start]! <= crop) j++;
    const distinct = new Set(hits.slice(i, j).map((w) => w.term)).size;
    if (distinct > bestDistinct || (distinct === bestDistinct && j - i > bestCount))
      [best, bestCount, bestDistinct] = [i, j - i, distinct];
  }
  let start = 0;
  if (bestCount) {
    const s = cp[hits[best]!.start]!;
    const e = cp[hits[best + bestCount - 1]!.end]!;
    start = Math.max(0, s - Math.floor((crop - (e - s)) / 2));
  }
  const end = Math.min(n, start + crop);
  start = Math.max(0, end - crop);
  const inside = words.filter((w) => cp[w.start]! >= start && cp[w.end]! <= end);
  if (!inside.length) {
    // Grapheme clusters, by UTF-16 offset: where a cut may fall.
    const kept = clustersOf(text).filter((g) => cp[g.start]! >= start && cp[g.end]! <= end);
    if (!kept.length) return CROP_MARKER;
    const [first, last] = [kept[0]!.start, kept.at(-1)!.end];
    return (
      (first > 0 ? CROP_MARKER : "") + escapeHtml(text.slice(first, last)) + (last < text.length ? CROP_MARKER : "")
    );
  }
  const from = start === 0 ? 0 : inside[0]!.start;
  let to = end === n ? text.length : inside.at(-1)!.end;
  // Closing punctuation after the last word, a whole cluster at a time: the clusters from `to` on, while one starts
  // there (none does when `to` falls inside a cluster).
  const segments = graphemes.segment(text);
  for (let g = segments.containing(to); g && g.index === to; g = segments.containing(to)) {
    const gEnd = g.index + g.segment.length;
    if (cp[gEnd]! - cp[from]! > crop || !/[^\s\p{L}\p{N}]/u.test(text[g.index]!)) break;
    to = gEnd;
  }
  return (from > 0 ? CROP_MARKER : "") + render(from, to) + (to < text.length ? CROP_MARKER : "");
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** A text's grapheme clusters by UTF-16 offset, kept for the last text as tokensOf keeps its words. */
const clustersOf = (() => {
  let last: { text: string; clusters: { start: number; end: number }[] } | undefined;
  return (text: string) => {
    if (last?.text !== text)
      last = {
        text,
        clusters: [...graphemes.segment(text)].map((g) => ({ start: g.index, end: g.index + g.segment.length })),
      };
    return last.clusters;
  };
})();

/**
 * Every chunk of the engine's snapshot (or those whose text `wanted` takes), with a few of its own words and a word of
 * another chunk as the matched terms: the middle word of the last chunk before it that has words ("history" before any).
 */
function* chunkCases(
  engine: Engine,
  wanted: (text: string) => boolean = () => true,
): Generator<{ title: string; text: string; matched: Set<string> }> {
  const table = engine.snapshot.pages;
  const chunks: { title: string; text: string }[] = [];
  for (let i = 0; i < table.length; i++)
    for (let c = 0; c < table.chunkCounts[i]!; c++)
      chunks.push({ title: table.at(i).title, text: table.chunkText(i, c) });
  const wordsOf = (k: number) => tokensOf(chunks[k]!.text, engine.lang).map((t) => t.term);
  // The word of another chunk for those after chunk `upTo`: read again only for chunks after it that were not wanted.
  let known = { upTo: -1, other: "history" };
  for (let k = 0; k < chunks.length; k++) {
    const { title, text } = chunks[k]!;
    if (!wanted(text)) continue;
    let other = known.other;
    for (let b = k - 1; b > known.upTo; b--) {
      const before = wordsOf(b);
      if (!before.length) continue;
      other = before[before.length >> 1]!;
      break;
    }
    // Read last: tokensOf keeps them for the reference.
    const words = wordsOf(k);
    known = { upTo: k, other: words.length ? words[words.length >> 1]! : other };
    yield { title, text, matched: new Set([other, ...words.filter((_, i) => i % 37 === 5)]) };
  }
}

describe("crop and highlight", () => {
  for (const [name, engine] of [
    ["English", en],
    ["Japanese", ja],
    ["Marathi", mr],
    ["Ukrainian", uk],
  ] as const) {
    test(`agree with a plain reading of D9 on every chunk (${name})`, async () => {
      const e = await engine();
      let checked = 0;
      let highlighted = 0;
      let wide = 0;
      for (const { title, text, matched } of chunkCases(e)) {
        const m = terms(matched);
        for (const crop of [50, 400]) {
          const got = formatText(text, m, crop, true, e.lang);
          expect(got).toBe(reference(text, matched, crop, true, e.lang));
          if (got.includes("<em>")) highlighted++;
        }
        expect(formatText(text, m, 400, false, e.lang)).toBe(reference(text, matched, 400, false, e.lang));
        expect(formatTitle(title, m, true, e.lang)).toBe(
          reference(title, matched, Number.MAX_SAFE_INTEGER, true, e.lang),
        );
        if (/[\ud800-\udbff]/.test(text)) wide++;
        checked++;
      }
      expect(checked).toBeGreaterThan(1000);
      expect(highlighted).toBeGreaterThan(checked);
      if (name === "Japanese") expect(wide).toBeGreaterThan(0);
    }, 300_000);
  }

  test("never cut a grapheme cluster: the crop's ends and every <em> fall between user-perceived characters", async () => {
    const bn = await engineFor({ dumps: [TRUNCATED_XZ[0]!], allowTruncated: true });
    const e = await ja();
    // Real text: a Japanese sentence ending in a flag, "…輩出している。🇨🇴". Before, the closing punctuation kept after
    // the last word took the flag's first half (a lone surrogate at some lengths, a regional indicator at others).
    const flagged = chunkTextsOf(e).find((text) => text.includes("輩出している。🇨🇴"))!;
    // A chunk whose every cluster is one UTF-16 unit has no offset inside a cluster to cut at: most Japanese chunks
    // (6,363 of 6,399), whose crops the plain reading of D9 checks above. Every Bengali chunk but 34 has clusters.
    // Those are left out before their words are read (Japanese's segmenter is slow): the others' cases are the same.
    const startsOf = (text: string) => [...graphemes.segment(text)].map((g) => g.index);
    const hasClusters = (text: string) => startsOf(text).length !== text.length;
    const cases = [
      ...[...chunkCases(bn, hasClusters)].map((c) => ({ ...c, lang: bn.lang })),
      ...[...chunkCases(e, hasClusters)].map((c) => ({ ...c, lang: e.lang })),
      { text: flagged, matched: new Set(["輩出"]), lang: e.lang },
    ];
    let cut = 0;
    let clustered = 0;
    for (const { text, matched, lang } of cases) {
      const starts = startsOf(text);
      if (starts.length === text.length) continue;
      clustered++;
      const bounds = new Set(starts.concat(text.length));
      const m = terms(matched);
      // Short crops as the library allows (crop_length ≥ 1): a word longer than the window is cut inside.
      for (const crop of [4, 12, 27, 50]) {
        const got = formatText(text, m, crop, true, lang);
        expect(got).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
        const body = got.replace(new RegExp(`^${CROP_MARKER}|${CROP_MARKER}$`, "g"), "");
        // The shown text's offsets in the chunk: the body's ends and each tag's place.
        const tagsAt: number[] = [];
        let shown = "";
        for (const part of body.split(/(<\/?em>)/))
          if (part === "<em>" || part === "</em>") tagsAt.push(shown.length);
          else shown += part.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
        if (!shown) continue;
        cut++;
        // Some place of it in the chunk (a short body may stand at several) has every offset between clusters.
        let at = text.indexOf(shown);
        const between = (a: number) => [a, a + shown.length, ...tagsAt.map((t) => a + t)].every((o) => bounds.has(o));
        while (at >= 0 && !between(at)) at = text.indexOf(shown, at + 1);
        expect([crop, got, at >= 0]).toEqual([crop, got, true]);
      }
    }
    expect(clustered).toBeGreaterThan(3900);
    expect(cut).toBeGreaterThan(10_000);
  }, 300_000);

  test("typo and prefix expansions are highlighted where the hit's chunk holds them, and nowhere else", async () => {
    const e = await en();
    const mix = queryMix(e.snapshot);
    let expansions = 0;
    for (const kind of ["typo", "prefix"] as const) {
      for (let q = 0; q < 40; q++) {
        const query = mix[kind]!();
        const queryWord = fold(query.trim());
        for (const hit of e.search(query, { cropLength: 2000 }).hits) {
          const emphasised = [...`${hit.formatted.title} ${hit.formatted.text}`.matchAll(/<em>(.*?)<\/em>/g)].map((m) =>
            fold(m[1]!.replace(/&amp;/g, "&")),
          );
          const chunk = e.snapshot.pages.ids.indexOf(hit.page.pageId);
          for (const word of emphasised) {
            if (word === queryWord) continue;
            expansions++;
            // An expansion is a term of the index that this very chunk holds (its text, section or title).
            const term = e.text.termOf(indexKey(word));
            expect(term).toBeDefined();
            expect(e.text.holds(term!, firstChunkOf(e, chunk) + hit.chunk)).toBe(true);
          }
          // Every word of the shown text that the hit's chunk matched by its exact form is highlighted.
          const shown = hit.formatted.text.replace(/<\/?em>/g, "");
          for (const t of tokens(shown, e.lang))
            if (t.term === queryWord) expect(hit.formatted.text).toContain(`<em>${shown.slice(t.start, t.end)}</em>`);
        }
      }
    }
    expect(expansions).toBeGreaterThan(50);
  }, 120_000);
});

/** The engine's number of the first chunk of page row i (chunks are numbered page by page). */
function firstChunkOf(e: Engine, row: number): number {
  let first = 0;
  for (let i = 0; i < row; i++) first += e.snapshot.pages.chunkCounts[i]!;
  return first;
}

/** The schema with `additionalProperties: false` on every object, as Elysia checked answers. */
function closed(schema: TSchema): TSchema {
  if (Array.isArray(schema)) return schema.map(closed) as unknown as TSchema;
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string | symbol, unknown> = { ...schema };
  for (const [k, v] of Object.entries(schema))
    if (typeof v === "object" && v !== null && k !== "examples" && k !== "default")
      out[k] =
        k === "properties"
          ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, closed(s as TSchema)]))
          : closed(v as TSchema);
  if (schema.type === "object") out.additionalProperties = false;
  return out as unknown as TSchema;
}

describe("search answers", () => {
  test("match their schema (formats included), as Elysia no longer checks each one", async () => {
    const e = await en();
    const app = createApp(e);
    const check = TypeCompiler.Compile(closed(SearchResponse));
    const mix = queryMix(e.snapshot);
    let hits = 0;
    try {
      for (const make of Object.values(mix)) {
        for (let q = 0; q < 15; q++) {
          const query = make();
          if (!query.replace(/"/g, "").trim()) continue;
          for (const extra of ["", "&limit=50&crop_length=50", "&highlight=false&offset=3"]) {
            const res = await app.handle(
              new Request(`http://localhost/v1/search?q=${encodeURIComponent(query)}${extra}`),
            );
            expect(res.status).toBe(200);
            const body = (await res.json()) as { hits: unknown[] };
            const errors = [...check.Errors(body)].map((x) => `${x.path}: ${x.message}`);
            expect(errors).toEqual([]);
            hits += body.hits.length;
          }
        }
      }
      // The check itself refuses a broken answer (a bad url, a missing field).
      const body = (await (await app.handle(new Request("http://localhost/v1/search?q=history"))).json()) as {
        hits: Record<string, unknown>[];
      };
      expect(check.Check(body)).toBe(true);
      expect(check.Check({ ...body, hits: [{ ...body.hits[0], url: "not a url" }] })).toBe(false);
      const { _formatted: _, ...unformatted } = body.hits[0]!;
      expect(check.Check({ ...body, hits: [unformatted] })).toBe(false);
    } finally {
      app.close();
    }
    expect(hits).toBeGreaterThan(500);
  }, 120_000);
});

describe("a search's time limit (D91)", () => {
  test("a search cut off answers with what it found, and says so; within its limit it says not", async () => {
    const e = await en();
    const ask = async (app: ReturnType<typeof createApp>, path: string) =>
      (await (await app.handle(new Request(`http://localhost${path}`))).json()) as Record<string, any>;
    // No time at all: the executor reads one window of "the"'s chunks, then stops.
    const hurried = createApp(e, { searchTimeoutMs: 0 });
    const patient = createApp(e);
    try {
      const cut = await ask(hurried, "/v1/search?q=the%20of%20and&limit=20");
      const whole = await ask(patient, "/v1/search?q=the%20of%20and&limit=20");
      expect(cut.timedOut).toBe(true);
      expect(whole.timedOut).toBe(false);
      expect(cut.hits.length).toBeGreaterThan(0);
      // What was found before the limit, not the whole answer.
      expect(cut.hits.map((h: { id: string }) => h.id)).not.toEqual(whole.hits.map((h: { id: string }) => h.id));
      const lucky = await ask(hurried, "/v1/lucky?q=the%20of%20and");
      expect(lucky.search_context.timed_out).toBe(true);
      expect((await ask(patient, "/v1/lucky?q=the%20of%20and")).search_context.timed_out).toBe(false);
    } finally {
      hurried.close();
      patient.close();
    }
  }, 120_000);

  test("the limit holds in the search pool's workers as on the request thread (D101)", async () => {
    const e = await en();
    const ask = async (app: ReturnType<typeof createApp>, path: string) =>
      (await (await app.handle(new Request(`http://localhost${path}`))).json()) as Record<string, any>;
    const hurried = createApp(e, { searchTimeoutMs: 0, searchWorkers: 1 });
    // A limit of its own: a worker opens the snapshot itself, without engineFor's, and a machine busy with other test
    // files took longer than the default 100 ms (D91) on this search.
    const patient = createApp(e, { searchWorkers: 1, searchTimeoutMs: 60_000 });
    try {
      expect((await ask(hurried, "/v1/search?q=the%20of%20and&limit=20")).timedOut).toBe(true);
      expect((await ask(patient, "/v1/search?q=the%20of%20and&limit=20")).timedOut).toBe(false);
      expect((await ask(hurried, "/v1/lucky?q=the%20of%20and")).search_context.timed_out).toBe(true);
      expect(hurried.pool!.stats()).toMatchObject({ answered: 2, missing: 0 });
    } finally {
      hurried.close();
      patient.close();
    }
  }, 120_000);
});
