/**
 * _rankingScore (issue 45): show_ranking_score=true on /v1/search, the MCP search tool and
 * Hit.rankingScore in the library give each hit a score in [0, 1] that never rises down the
 * list (across pages of results too), on real questions over the real English dumps; the
 * OpenAPI document describes the parameter and the field.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { apiContext, createApp, mcpTools } from "../src/http";
import { EN_2006, EN_2016, engineFor } from "./helpers";
import { sharedData } from "../src/cli/shared-data";

setDefaultTimeout(120_000);

type Json = Record<string, any>;
const en = () => engineFor({ dumps: [EN_2006, EN_2016] });

/** Real questions (SQuAD dev), and words, typos, phrases and titles. */
function queries(): string[] {
  const questions = readFileSync(join(sharedData(), "eval/squad-dev-questions.jsonl"), "utf8")
    .trim()
    .split("\n")
    .slice(0, 60)
    .map((line) => (JSON.parse(line) as { question: string }).question);
  return [
    ...questions,
    "anarchism",
    "anarchsm",
    "Albedo",
    "albedo of snow",
    '"political philosophy"',
    "the",
    "transport in angola",
    "autism",
  ];
}

function expectInRangeAndOrder(scores: number[], label: string): void {
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    expect({ label, i, inRange: Number.isFinite(s) && s >= 0 && s <= 1 }).toEqual({ label, i, inRange: true });
    if (i) expect({ label, i, rises: s > scores[i - 1]! }).toEqual({ label, i, rises: false });
  }
}

describe("Hit.rankingScore (the library)", () => {
  test("in [0, 1], never rising down the list, on every query, across pages of results and within one page (page_id)", async () => {
    const engine = await en();
    let hits = 0;
    for (const q of queries()) {
      const first = engine.search(q, { limit: 20 }).hits;
      const next = engine.search(q, { limit: 20, offset: 20 }).hits;
      expectInRangeAndOrder(
        [...first, ...next].map((h) => h.rankingScore),
        q,
      );
      hits += first.length + next.length;
      if (first[0])
        expectInRangeAndOrder(
          engine.search(q, { limit: 50, pageId: first[0].page.pageId }).hits.map((h) => h.rankingScore),
          `${q} (page ${first[0].page.pageId})`,
        );
    }
    expect(hits).toBeGreaterThan(1000);
  });

  test("an exact title scores above a page that only holds the word, and a hit with every word above one with some", async () => {
    const engine = await en();
    const [title, ...others] = engine.search("Anarchism", { limit: 10 }).hits;
    expect(title!.page.title).toBe("Anarchism");
    for (const h of others) expect(h.rankingScore).toBeLessThan(title!.rankingScore);
    const all = engine.search("albedo snow", { limit: 50 }).hits;
    expect(all[0]!.rankingScore).toBeGreaterThan(all.at(-1)!.rankingScore);
  });
});

describe("show_ranking_score on /v1/search", () => {
  const search = async (query: string) => {
    const app = createApp(await en());
    const res = await app.handle(new Request(`http://localhost/v1/search?${query}`));
    return { status: res.status, body: (await res.json()) as Json };
  };

  test("true (or 1) adds _rankingScore to every hit, in [0, 1] and never rising; absent or false adds none", async () => {
    for (const on of ["true", "1", "TRUE"]) {
      const { status, body } = await search(`q=history%20of%20the%20city&limit=20&show_ranking_score=${on}`);
      expect(status).toBe(200);
      expect(body.hits.length).toBe(20);
      expectInRangeAndOrder(
        body.hits.map((h: Json) => h._rankingScore),
        on,
      );
    }
    for (const off of ["", "&show_ranking_score=false", "&show_ranking_score=0"]) {
      const { body } = await search(`q=albedo&limit=5${off}`);
      for (const h of body.hits) expect("_rankingScore" in h).toBe(false);
    }
  });

  test("the scores are the library's", async () => {
    const engine = await en();
    const { body } = await search("q=albedo%20of%20snow&limit=10&show_ranking_score=true");
    expect(body.hits.map((h: Json) => h._rankingScore)).toEqual(
      engine.search("albedo of snow", { limit: 10 }).hits.map((h) => h.rankingScore),
    );
  });

  test("anything else is a 400 naming the parameter", async () => {
    const { status, body } = await search("q=albedo&show_ranking_score=maybe");
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_parameter");
    expect(body.details.parameter).toBe("show_ranking_score");
  });
});

describe("show_ranking_score on the MCP search tool", () => {
  test("adds _rankingScore to the structured hits and the score to the text", async () => {
    const server = mcpTools(apiContext(await en()), { logError: (error) => console.error(error) }).server();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(clientSide);
    try {
      const tools = await client.listTools();
      const input = tools.tools.find((t) => t.name === "search")!.inputSchema as Json;
      expect(input.properties.show_ranking_score.type).toBe("boolean");
      const result = (await client.callTool({
        name: "search",
        arguments: { q: "albedo", limit: 5, show_ranking_score: true },
      })) as Json;
      const hits = result.structuredContent.hits as Json[];
      expectInRangeAndOrder(
        hits.map((h) => h._rankingScore),
        "mcp",
      );
      expect(result.content[0].text).toContain(`score ${hits[0]!._rankingScore.toFixed(3)}`);
      const plain = (await client.callTool({ name: "search", arguments: { q: "albedo", limit: 5 } })) as Json;
      expect(plain.structuredContent.hits.some((h: Json) => "_rankingScore" in h)).toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe("the OpenAPI document", () => {
  test("describes show_ranking_score on /v1/search and _rankingScore, a number from 0 to 1, on its hits", async () => {
    const app = createApp(await en());
    const doc = (await (await app.handle(new Request("http://localhost/v1/openapi.json"))).json()) as Json;
    const resolve = (schema: Json): Json =>
      schema.$ref
        ? resolve(
            schema.$ref
              .split("/")
              .slice(1)
              .reduce((at: Json, key: string) => at[key], doc),
          )
        : schema;
    const operation = doc.paths["/v1/search"].get;
    const param = operation.parameters.map(resolve).find((p: Json) => p.name === "show_ranking_score");
    expect(param.in).toBe("query");
    expect(resolve(param.schema).type).toBe("boolean");
    expect(resolve(param.schema).default).toBe(false);
    const response = resolve(resolve(operation.responses["200"]).content["application/json"].schema);
    const hit = resolve(resolve(response.properties.hits).items);
    const score = resolve(hit.properties._rankingScore);
    expect(score).toMatchObject({ type: "number", minimum: 0, maximum: 1 });
    expect(score.description).toContain("never rises down the list");
    expect(hit.required ?? []).not.toContain("_rankingScore");
  });
});
