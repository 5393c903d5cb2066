/**
 * The error table (src/http/errors.ts) against the spec: every code api.md's section 7 lists
 * is a row with its status, every row the table says the spec names is there, and the key
 * store's refusals (written in the access layer, below HTTP) send the table's codes.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { invalidKey, NO_KEY, readScope, type Grant } from "../src/access/grant";
import { REFUSAL_ROWS } from "../src/http/steps/keys";
import { sharedData } from "../src/cli/shared-data";
import {
  type ApiError,
  errorAnswer,
  errorResponse,
  ERRORS,
  missingParameter,
  parameterError,
  retryLater,
} from "../src/http/errors";
import { readSince } from "../src/http/routes/changes";

/** The spec lies beside the data (test/fixtures/spec beside test/fixtures/data, as shared/spec beside shared/data). */
const SPEC = join(sharedData(), "../spec");
const apiMd = readFileSync(join(SPEC, "api.md"), "utf8");
const decisionsMd = readFileSync(join(SPEC, "decisions.md"), "utf8");

/** api.md section 7's table: error text → status. */
function apiErrors(): Map<string, number> {
  const section = apiMd.slice(apiMd.indexOf("## 7. Errors"), apiMd.indexOf("## 8."));
  const rows = [...section.matchAll(/^\|\s*(\d{3})\s*\|\s*`([^`]+)`\s*\|/gm)];
  return new Map(rows.map((m) => [m[2]!, Number(m[1])]));
}

/** decisions.md D1's paragraph: the codes it names in backticks or as "error":"…". */
function d1Text(): string {
  const start = decisionsMd.indexOf("**D1 ");
  return decisionsMd.slice(start, decisionsMd.indexOf("- **D2 ", start));
}

const rows = Object.values(ERRORS);

describe("the error table", () => {
  test("api.md's section 7 is read: eleven codes, each with a status", () => {
    const spec = apiErrors();
    expect(spec.size).toBe(11);
    expect(spec.get("missing q")).toBe(400);
  });

  test("every code api.md lists is a row, with api.md's status", () => {
    const table = new Map(rows.map((r) => [r.code, r]));
    for (const [code, status] of apiErrors()) {
      expect({
        code,
        row: table.get(code) && { status: table.get(code)!.status, spec: table.get(code)!.spec },
      }).toEqual({
        code,
        row: { status, spec: "api.md" },
      });
    }
  });

  test("every row said to be api.md's is in api.md's table; every row said to be D1's is named by D1", () => {
    const spec = apiErrors();
    const d1 = d1Text();
    for (const row of rows) {
      if (row.spec === "api.md")
        expect({ code: row.code, status: spec.get(row.code) }).toEqual({ code: row.code, status: row.status });
      if (row.spec === "D1")
        expect({
          code: row.code,
          named: d1.includes(`\`${row.code}\``) || d1.includes(`"error":"${row.code}"`),
        }).toEqual({ code: row.code, named: true });
    }
  });

  test("rows beyond the spec are not in it (else the row should say where the spec names it)", () => {
    const spec = apiErrors();
    const d1 = d1Text();
    const beyond = rows.filter((r) => r.spec === "tome");
    expect(beyond.map((r) => r.code).sort()).toEqual([
      "bad_request",
      "content_too_large",
      "method not allowed",
      "service_unavailable",
    ]);
    for (const row of beyond)
      expect({ code: row.code, inSpec: spec.has(row.code) || d1.includes(`\`${row.code}\``) }).toEqual({
        code: row.code,
        inSpec: false,
      });
    // D1 gives the 405 its status without naming a code.
    expect(d1).toContain("405");
    expect(ERRORS.methodNotAllowed.status).toBe(405);
  });

  test("codes are unique, and each status is an error status", () => {
    expect(new Set(rows.map((r) => r.code)).size).toBe(rows.length);
    for (const row of rows) expect(row.status >= 400 && row.status <= 599).toBe(true);
  });

  test("missing q: the required q is refused with the row's code and status", () => {
    const error = missingParameter("q", ERRORS.missingQ.message());
    expect([error.status, error.code, error.message]).toEqual([400, "missing q", "The query parameter q is required."]);
  });

  test("the key store's refusals are answered with the table's rows: 401 without a key, 403 for an invalid key or a read key's PDF, 503 with no store", () => {
    const expired = { record: { revoked_at: null, expires_at: "2020-01-01T00:00:00.000Z" } } as Parameters<
      typeof invalidKey
    >[0];
    for (const [refusal, row] of [
      [NO_KEY, ERRORS.unauthorized],
      [readScope({} as Grant), ERRORS.forbidden],
      [invalidKey(undefined), ERRORS.forbidden],
      [invalidKey(expired), ERRORS.forbidden],
    ] as const) {
      expect(REFUSAL_ROWS[refusal.reason]).toBe(row);
    }
    expect([REFUSAL_ROWS.unavailable.status, REFUSAL_ROWS.unavailable.code]).toEqual([503, "service_unavailable"]);
  });

  test("HTTP (its MCP tools included) and the access layer write no error code of their own: each names a row of the table", () => {
    const root = join(import.meta.dir, "../src");
    const files = ["http", "access"].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts") && !(dir === "http" && f === "errors.ts"))
        .map((f) => join(dir, f)),
    );
    expect(files.length).toBeGreaterThan(40);
    const codes = rows.map((r) => r.code);
    const literal = new RegExp(`(error: |new ApiError\\(\\d{3}, |\\[|^\\s*)"(${codes.join("|")})"`, "m");
    const offenders = files.filter((f) => {
      const text = readFileSync(join(root, f), "utf8");
      return literal.test(text) || /new ApiError\(\d{3}/.test(text);
    });
    expect(offenders).toEqual([]);
  });
});

describe("a refusal that says when to come back", () => {
  /** What a client sees of an answer: status, headers, body bytes. */
  const seen = async (r: Response) => ({ status: r.status, headers: [...r.headers].sort(), body: await r.text() });

  test("errorAnswer(retryLater(…)) answers as the steps' refusals built by hand did: retry_after in the body, Retry-After", async () => {
    const rows = [
      [ERRORS.serviceUnavailable, 5, "The snapshot is being replaced; retry in a few seconds."],
      [ERRORS.rateLimitExceeded, 1, "Too many requests: this key's plan allows 10 per second. Retry after 1 s."],
      [ERRORS.unauthorized, 2, "No key."],
    ] as const;
    for (const [row, seconds, message] of rows) {
      const byHand = errorResponse(row, [message], {
        extra: { retry_after: seconds },
        headers: { "retry-after": String(seconds) },
      });
      const built = await seen(errorAnswer(retryLater(row, seconds, message)));
      expect(built).toEqual(await seen(byHand));
      expect(built.status).toBe(row.status);
      expect(JSON.parse(built.body)).toEqual({ error: row.code, message, retry_after: seconds });
      expect(built.headers).toContainEqual(["retry-after", String(seconds)]);
    }
  });
});

describe("a refused value echoed in details", () => {
  /** A's then emoji: character 200 is the first half of an emoji, where a cut by UTF-16 units splits its pair. */
  const value = `a${"😀".repeat(300)}`;
  const refusedSince = (raw: string) => {
    try {
      readSince(raw);
    } catch (e) {
      return errorAnswer(e as ApiError);
    }
    throw new Error(`${raw} was read`);
  };

  test("is cut to at most 200 characters between code points, never half a surrogate pair (strict JSON readers refuse a lone \\ud83d)", async () => {
    for (const answer of [errorAnswer(parameterError("q", value, "at most 500 characters")), refusedSince(value)]) {
      const text = await answer.text();
      expect(text).not.toMatch(/\\ud[89ab][0-9a-f]{2}"/);
      const echoedValue = JSON.parse(text).details.value as string;
      expect(echoedValue.isWellFormed()).toBe(true);
      expect(echoedValue).toBe(`a${"😀".repeat(99)}`);
    }
  });

  test("a lone half of a surrogate pair in the value is said as U+FFFD, not written as a lone \\ud800 escape; one at the cut, not a pair's, too", async () => {
    // No request's query or path decodes to one (%ED%A0%80 is read as U+FFFD three times); a value from elsewhere may.
    const lateHigh = `${"x".repeat(199)}\ud800yz`;
    for (const [value, said] of [
      ["a\ud800b", "a\ufffdb"],
      ["\udc00b", "\ufffdb"],
      [lateHigh, `${"x".repeat(199)}\ufffd`],
    ]) {
      for (const answer of [errorAnswer(parameterError("q", value!, "at most 500 characters")), refusedSince(value!)]) {
        const text = await answer.text();
        // Were "a\ud800b" and "\udc00b" as escapes; the lone half at 199 was left out.
        expect(text).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/);
        expect(JSON.parse(text).details.value).toBe(said);
      }
    }
  });
});
