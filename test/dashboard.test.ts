/**
 * The dashboard (issue 46) in headless Chromium (Debian's, driven by puppeteer-core) over the
 * real server (`bun run start`) on the fixture dumps: an account holder signs in with the token
 * `keys account create` printed, creates a key, uses it on /v1/search, sees the request in the
 * usage, revokes it and sees the API refuse it; a wrong token, an API key and a form without its
 * CSRF token are refused; nothing is loaded from another origin; the same with JavaScript off;
 * the operator's view; and once more in Redis mode with two replicas: revoked on one, refused
 * on the other. Screenshots of each page at a desktop and a phone width go to
 * test-artifacts/dashboard/ (kept by CI).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import {
  appWithAccounts,
  cookieOf,
  csrfOf,
  dashboardSignIn,
  engineFor,
  EN_2016,
  FORM,
  keyMade,
  keyTool,
  ROOT,
  snapshotFor,
  startServer,
  NO_SEARCH_THREADS,
  startTool,
  tempDir,
  type ServerProcess,
} from "./helpers";
import { startRedis, type RedisServer } from "../bench/redis-server";
import { connect } from "node:net";
import {
  Access,
  ADDRESS_FAILURES,
  createAccountAccess,
  createKey as addKey,
  keysPath,
  type PlanName,
  readKeyFile,
  replaceAccountToken,
  updateKeyFile,
} from "../src/access";
import { type App, type AppOptions, createApp, serve } from "../src/http";
import { MAX_COUNTED_ADDRESSES } from "../src/access/sign-in-limits";
import { lockFiles, lockText } from "../src/files";
import { KEY_STORE_SOCKET_SECONDS } from "../src/request-time";
import { KEYS_A_DAY } from "../src/http/dashboard/account";
import { KEYS_PER_PAGE } from "../src/http/dashboard/account-page";
import { usageChart } from "../src/http/dashboard/chart";

setDefaultTimeout(180_000);

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = join(ROOT, "test-artifacts/dashboard");
const ADMIN_TOKEN = "operator-token-0123456789abcdef";
const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };

let browser: Browser;
/** Every URL a page of the test requested. */
const requested: string[] = [];
/** When each request of the pages (newPage) and of fetch() left, and to where: D82 counts them per address. */
const sent: { at: number; url: string }[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: this test opens the dashboard in headless Chromium. Install it with: bash src/cli/run.sh setup`,
    );
  mkdirSync(SHOTS, { recursive: true });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Anything but loopback meets a dead proxy: only our server is reachable.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--proxy-server=http://127.0.0.1:9",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
});

async function newPage(javaScript = true): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setJavaScriptEnabled(javaScript);
  await page.setViewport(WIDTHS.desktop);
  page.on("request", (r) => {
    requested.push(r.url());
    sent.push({ at: Date.now(), url: r.url() });
  });
  await page.goto("about:blank");
  return page;
}

/** The page at both widths, as test-artifacts/dashboard/NAME-desktop.png and NAME-phone.png. */
async function shoot(page: Page, name: string): Promise<void> {
  for (const [width, viewport] of Object.entries(WIDTHS)) {
    await page.setViewport(viewport);
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`) as `${string}.png`, fullPage: true });
  }
  await page.setViewport(WIDTHS.desktop);
}

/** Submits the form holding `button` and waits for the page it answers with; its status. */
async function submit(page: Page, button: string): Promise<number> {
  const [response] = await Promise.all([page.waitForNavigation(), page.click(button)]);
  return response!.status();
}

async function signIn(page: Page, base: string, token: string): Promise<number> {
  await page.goto(`${base}/dashboard`);
  expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  await page.type("#token", token);
  return submit(page, "form[action='/dashboard/sign-in'] button[type=submit]");
}

async function createKey(
  page: Page,
  name: string,
  scope: "read" | "full" = "read",
): Promise<{ status: number; key: string }> {
  await page.type("#name", name);
  await page.click(`input[name=scope][value=${scope}]`);
  const status = await submit(page, "form[action='/dashboard/keys'] button[type=submit]");
  const key = await page.$eval("#new-key", (el) => (el as unknown as { value: string }).value).catch(() => "");
  return { status, key };
}

/** The row of the key named `name`: its cells by column label. */
async function rowOf(page: Page, name: string): Promise<Record<string, string>> {
  return page.$$eval(
    "table.keys tbody tr",
    (rows, wanted) => {
      for (const row of rows) {
        const cells = Object.fromEntries(
          [...row.querySelectorAll("td[data-label]")].map((td) => [
            td.getAttribute("data-label")!,
            td.textContent!.trim(),
          ]),
        );
        if (cells.Name === wanted) return cells;
      }
      return {};
    },
    name,
  );
}

async function revoke(page: Page, name: string): Promise<void> {
  await Promise.all([
    page.waitForNavigation(),
    page.click(`xpath/.//tr[td[@data-label='Name'][normalize-space()='${name}']]//a[contains(@href,'/revoke')]`),
  ]);
}

const search = (base: string, key: string) =>
  fetch(`${base}/v1/search?q=anarchism`, { headers: { "X-API-Key": key } }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });

/** The session cookie the page holds, as a Cookie header. */
async function cookieHeader(page: Page): Promise<string> {
  const cookies = await page.browserContext().cookies();
  return cookies.map((c) => `${c.name}=${c.value}`).join("; ");
}

/**
 * An account made in the Redis store at `env.TOME_REDIS_URL` by the key tool (`keys account create --json`, its main
 * run in this process: keyTool): its dashboard token.
 */
async function issueRedisToken(env: Record<string, string>, account: string, plan: string): Promise<string> {
  const r = await keyTool(env, "account", "create", "--account", account, "--plan", plan, "--json");
  if (r.code !== 0) throw new Error(r.stderr);
  const made = JSON.parse(r.stdout);
  expect(made).toEqual({
    account,
    plan,
    dashboard_token: expect.stringMatching(new RegExp(`^wd_[A-Za-z0-9]{32}\\.${account}$`)),
  });
  return made.dashboard_token;
}

/**
 * An account made in the data folder `dir` as `bun run keys account create` makes it (test/keys.test.ts runs the
 * command itself), in this process: its dashboard token.
 */
function issueToken(dir: string, account: string, plan: PlanName): string {
  const made = updateKeyFile(dir, (file) => createAccountAccess(file, account, plan));
  expect({ plan: made.account.plan, token: made.token }).toEqual({
    plan,
    token: expect.stringMatching(new RegExp(`^wd_[A-Za-z0-9]{32}\\.${account}$`)),
  });
  return made.token;
}

/** An API key made in the data folder `dir` as `bun run keys create` makes it (default scope read), in this process. */
const apiKeyIn = async (dir: string, name: string, account: string, plan?: PlanName, scope: "read" | "full" = "read") =>
  (await keyMade(dir, { name, account, plan, scope })).key;

/** At a phone's width (390 px): the height of each key's row, where "Create a key" starts on the page, and whether the new key's field holds its text. */
async function onPhone(
  page: Page,
  shot: string,
  at = "main",
): Promise<{ rows: number[]; createAt: number; keyFits: boolean | null }> {
  await page.setViewport(WIDTHS.phone);
  // The screen's worth from `at` down, as a phone shows it: test-artifacts/dashboard/SHOT-phone-screen.png.
  await page.$eval(at, (el) => el.scrollIntoView());
  await page.screenshot({ path: join(SHOTS, `${shot}-phone-screen.png`) as `${string}.png` });
  const measured = await page.evaluate(`(() => {
    const field = document.querySelector("#new-key");
    return {
      rows: [...document.querySelectorAll("table.keys tbody tr")].map((tr) => tr.getBoundingClientRect().height),
      createAt: (document.querySelector("#create-title")?.getBoundingClientRect().top ?? -1) + scrollY,
      // The text wraps within the field: nothing runs past its right edge, and the field stays on the screen.
      keyFits: field ? field.scrollWidth <= field.clientWidth && field.getBoundingClientRect().right <= 390 : null,
    };
  })()`);
  await page.setViewport(WIDTHS.desktop);
  return measured as { rows: number[]; createAt: number; keyFits: boolean | null };
}

/** The credits the usage chart's axis reads, bottom to top. */
const axisLabels = (page: Page) =>
  page.$$eval("svg.chart text.axis[text-anchor=end]", (texts) => texts.map((t) => t.textContent));

/** A wrong dashboard token of `account`. */
const wrong = (account: string) => `wd_${"A".repeat(32)}.${account}`;

/** The sign-in form's CSRF cookie and field, fetched with `headers`. */
async function signInForm(
  base: string,
  headers: Record<string, string> = {},
): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${base}/dashboard/sign-in`, { headers });
  const cookie = form.headers.get("set-cookie")!.split(";")[0]!;
  return { cookie, csrf: csrfOf(await form.text()) };
}

/** A sign-in POST with the form's cookie and field: the answer (303 when signed in). */
const postSignIn = (base: string, form: { cookie: string; csrf: string }, token: string, headers = {}) =>
  fetch(`${base}/dashboard/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers, cookie: form.cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf: form.csrf, token }),
  });

/** One sign-in by form (its CSRF cookie and field first), with `headers`: the answer's status (303 signed in, 401, 429). */
async function signInAttempt(base: string, token: string, headers: Record<string, string> = {}): Promise<number> {
  const answer = await postSignIn(base, await signInForm(base, headers), token, headers);
  await answer.arrayBuffer();
  return answer.status;
}

/**
 * A server in this process over the English snapshot, as `bun run start` serves it with TOME_DATA=dir and `app`'s
 * settings (its keys and accounts in the folder's files, the folder taken and its usage saved; the work share off, as
 * startServer has it): its URL, and stop.
 */
async function serveInProcess(dir: string, app: AppOptions): Promise<{ url: string; stop: () => Promise<void> }> {
  const access = new Access({ dataDir: dir, keyMsPerSecond: 0 });
  const engine = await engineFor({ dumps: [EN_2016] });
  const running = serve(createApp(engine, { access, accounts: access.accounts(), ...app }), {
    port: 0,
    hostname: "127.0.0.1",
  });
  access.start();
  return {
    url: running.url.origin,
    stop: async () => {
      await running.stop();
      await access.stop();
    },
  };
}

describe("one server, keys in files", () => {
  let server: { url: string; stop: () => Promise<void> };
  let base: string;
  let data: string;
  let token: string;

  beforeAll(async () => {
    data = tempDir("tome-dash-");
    token = issueToken(data, "acme", "free");
    server = await serveInProcess(data, { adminToken: ADMIN_TOKEN });
    base = server.url;
  });
  afterAll(async () => {
    await server?.stop();
  });
  // Dashboard requests count per address in fixed 10 s windows, 100 at most (D82), and every request here comes from
  // 127.0.0.1: a test sending up to `most` of them waits for a window of its own when the earlier tests' requests in
  // this one leave it fewer (CI: the sign-in form answered 429). It used to wait for a new window every time, 5 s a test.
  // fetch() is spied on here for `sent`.
  let fetches: { mockRestore(): void };
  beforeAll(() => {
    const send = globalThis.fetch;
    fetches = spyOn(globalThis, "fetch").mockImplementation(((input: string | URL | Request, init?: RequestInit) => {
      sent.push({ at: Date.now(), url: input instanceof Request ? input.url : String(input) });
      return send(input, init);
    }) as typeof fetch);
  });
  afterAll(() => fetches.mockRestore());
  const roomFor = async (most: number) => {
    const now = Date.now();
    const window = now - (now % 10_000);
    const used = sent.filter((r) => r.at >= window && r.url.startsWith(`${base}/dashboard`)).length;
    if (used + most > 100) await Bun.sleep(window + 10_000 + 50 - now);
  };

  test("sign in, create a key, use it, see it in the usage, revoke it: the API refuses it with 403", async () => {
    await roomFor(90); // 73 sent when counted
    const page = await newPage();
    await page.goto(`${base}/dashboard`);
    await shoot(page, "sign-in");

    // A wrong token, and an API key, are refused with the reason.
    expect(await signIn(page, base, "wd_0000000000000000000000000000000A.acme")).toBe(401);
    expect(await page.$eval("[role=alert]", (el) => el.textContent)).toContain("not valid");
    await shoot(page, "sign-in-error");
    const apiKey = await apiKeyIn(data, "ops", "ops", "enterprise", "full");
    expect(await signIn(page, base, apiKey)).toBe(401);
    expect(await page.$eval("[role=alert]", (el) => el.textContent)).toContain("API keys never sign in here");

    expect(await signIn(page, base, token)).toBe(200);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await page.$eval(".empty-title", (el) => el.textContent)).toBe("No keys yet");
    await shoot(page, "account-empty");

    const made = await createKey(page, "Search bot");
    expect(made.status).toBe(201);
    expect(made.key).toMatch(/^wk_[A-Za-z0-9]{32}$/);
    // The copy button is shown by the script, and copies the key.
    expect(await page.evaluate(`getComputedStyle(document.querySelector("button[data-copy]")).display`)).not.toBe(
      "none",
    );
    await shoot(page, "key-created");

    expect(await search(base, made.key)).toBe(200);
    await page.goto(`${base}/dashboard`);
    // The key's text is shown only when it is made; its first characters tell it apart.
    expect(await page.content()).not.toContain(made.key);
    const row = await rowOf(page, "Search bot");
    expect(row).toMatchObject({
      Key: `${made.key.slice(0, 7)}…`,
      Scope: "Read",
      State: "Active",
      Requests: "1",
      Credits: "1",
      Expires: "Never",
    });
    expect(row["Last used"]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(await page.$eval(".big-num", (el) => el.textContent)).toBe("1");
    expect(await page.$eval("svg.chart desc", (el) => el.textContent)).toContain("1 credits in all");
    await shoot(page, "account-usage");

    await revoke(page, "Search bot");
    expect(await page.$eval("h1", (el) => el.textContent)).toBe("Revoke “Search bot”?");
    await shoot(page, "revoke-confirm");
    expect(await submit(page, "form[action$='/revoke'] button[type=submit]")).toBe(200);
    expect(await page.$eval("[role=status]", (el) => el.textContent)).toContain("is revoked");
    expect((await rowOf(page, "Search bot")).State).toBe("Revoked");
    expect(await search(base, made.key)).toBe(403);
    await shoot(page, "account-revoked");

    // Past the plan's count (free: 3 active keys) the form says why, and a POST is refused.
    for (const name of ["One", "Two", "Three"]) expect((await createKey(page, name)).status).toBe(201);
    await page.goto(`${base}/dashboard`);
    expect(await page.$eval(".alert.warn", (el) => el.textContent)).toContain("allows 3 active keys, and you have 3");
    await shoot(page, "plan-full");
    const csrf = await page.$eval("input[name=csrf]", (el) => el.getAttribute("value"));
    const over = await fetch(`${base}/dashboard/keys`, {
      method: "POST",
      headers: { cookie: await cookieHeader(page), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, name: "Four", scope: "read" }),
    });
    expect(over.status).toBe(409);
    expect(await over.text()).toContain("no key was created");

    // Signed out, the cookie no longer opens anything.
    const cookie = await cookieHeader(page);
    expect(await submit(page, "form[action='/dashboard/sign-out'] button")).toBe(200);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    expect(
      (await fetch(`${base}/dashboard`, { headers: { cookie }, redirect: "manual" })).headers.get("location"),
    ).toBe("/dashboard/sign-in");
    await page.close();
  });

  test("what a new user meets (issue 57): a whole-credit axis, a new key that wraps on a phone, a compact list of keys there, a signed-out message", async () => {
    await roomFor(50); // 35 sent when counted
    const mobile = issueToken(data, "mobile", "growth");
    const page = await newPage();
    expect(await signIn(page, base, mobile)).toBe(200);
    // An empty month's axis reads whole credits (0, 1, 2), not 0, 2.5, 5.
    expect(await axisLabels(page)).toEqual(["0", "1", "2"]);
    for (const name of ["Phone one", "Phone two", "Phone three"])
      expect((await createKey(page, name)).status).toBe(201);
    const made = await createKey(page, "Phone four", "full");
    expect(made.status).toBe(201);
    // On a phone (390 px) the new key wraps within its field.
    expect((await onPhone(page, "key-created")).keyFits).toBe(true);
    // Each key is a few short lines there, not a row a fact: with 4 keys, "Create a key" is within two screens.
    await page.goto(`${base}/dashboard`);
    const phone = await onPhone(page, "keys", "#keys-title");
    expect(phone.rows.length).toBe(4);
    for (const height of phone.rows) expect(height).toBeLessThan(150);
    expect(phone.createAt).toBeLessThan(2 * WIDTHS.phone.height);
    // Signing out says so.
    expect(await submit(page, "form[action='/dashboard/sign-out'] button")).toBe(200);
    expect(await page.$eval("[role=status]", (el) => el.textContent)).toBe("You are signed out.");
    await shoot(page, "signed-out");
    await page.close();
  });

  test("a key's name of 100 letters without a space wraps in its cell: the desktop page does not run wider than the window", async () => {
    await roomFor(30); // 18 sent when counted
    const long = issueToken(data, "longnames", "growth");
    const page = await newPage();
    expect(await signIn(page, base, long)).toBe(200);
    expect((await createKey(page, "x".repeat(100))).status).toBe(201);
    await page.goto(`${base}/dashboard`);
    const [scroll, client] = await page.$eval("html", (el) => [el.scrollWidth, el.clientWidth]);
    expect(scroll).toBe(client);
    await shoot(page, "long-name");
    await page.close();
  });

  test("a key's name of 100 emoji and CJK Extension B ideographs (200 UTF-16 units) is typed whole and made; the 101st is refused, as the message says", async () => {
    await roomFor(30);
    const page = await newPage();
    expect(await signIn(page, base, issueToken(data, "astral", "growth"))).toBe(200);
    // The field cut it at 100 units (maxlength counts them): 50 characters were made.
    const astral = "𠮷📚".repeat(50);
    expect((await createKey(page, astral)).status).toBe(201);
    expect(await page.$eval("#created-title bdi", (el) => el.textContent)).toBe(astral);
    // One more: the browser says so and sends nothing, or the server refuses it (400); no key is made either way.
    await page.type("#name", `${astral}📚`);
    expect(await page.$eval("#name", (el) => (el as unknown as { value: string }).value)).toBe(`${astral}📚`);
    const sentBefore = requested.length;
    await page.click("form[action='/dashboard/keys'] button[type=submit]");
    expect(await page.$eval("#name", (el) => (el as unknown as { validity: { valid: boolean } }).validity.valid)).toBe(
      false,
    );
    expect(requested.length).toBe(sentBefore);
    await page.close();
  });

  test("a long key name of words wraps between its words on a phone (375 px), in the new key's heading, the list and the revoke page: it broke mid-word", async () => {
    await roomFor(30);
    const page = await newPage();
    expect(await signIn(page, base, issueToken(data, "wordy", "growth"))).toBe(200);
    const name = "Nightly synchronisation of the internationalisation glossary";
    expect((await createKey(page, name)).status).toBe(201);
    /** The words of the name in `selector` at 375 px that lie on more than one line. */
    const broken = async (selector: string) => {
      await page.setViewport({ width: 375, height: 800 });
      return page.$eval(selector, (el) => {
        const text = [...el.childNodes].find((n) => n.nodeType === 3 && n.textContent!.includes(" "))!;
        const split: string[] = [];
        for (const m of text.textContent!.matchAll(/\S+/g)) {
          const range = el.ownerDocument.createRange();
          range.setStart(text, m.index);
          range.setEnd(text, m.index + m[0].length);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          if (lines.size > 1) split.push(m[0]);
        }
        return split;
      });
    };
    expect(await broken("#created-title bdi")).toEqual([]);
    await page.goto(`${base}/dashboard`);
    expect(await broken("table.keys .key-name")).toEqual([]);
    // A name of no spaces still wraps within the screen.
    expect((await createKey(page, "x".repeat(100))).status).toBe(201);
    await page.goto(`${base}/dashboard`);
    await page.setViewport({ width: 375, height: 800 });
    const [scroll, client] = await page.$eval("html", (el) => [el.scrollWidth, el.clientWidth]);
    expect(scroll).toBe(client);
    await shoot(page, "long-words-name");
    await revoke(page, name);
    expect(await broken("h1 bdi")).toEqual([]);
    await page.close();
  });

  test("forms replayed without their CSRF token, or from another origin, are refused; API keys never open the dashboard", async () => {
    await roomFor(55); // 41 sent when counted
    const page = await newPage();
    expect(await signIn(page, base, token)).toBe(200);
    const cookie = await cookieHeader(page);
    const csrf = await page.$eval("input[name=csrf]", (el) => el.getAttribute("value"));
    const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields),
      });
    const id = await page.$eval("a[href$='/revoke']", (a) => a.getAttribute("href")!.split("/")[3]!);
    expect((await post(`/dashboard/keys/${id}/revoke`, {})).status).toBe(403);
    expect((await post(`/dashboard/keys/${id}/revoke`, { csrf: "x".repeat(43) })).status).toBe(403);
    // Another site, no origin at all, or this host over another scheme (an http page posting to https, or the reverse).
    for (const origin of ["http://evil.example", "null", "not a url", base.replace("http:", "https:")])
      expect((await post(`/dashboard/keys/${id}/revoke`, { csrf }, { origin })).status).toBe(403);
    const res = await post("/dashboard/keys", { name: "Replayed", scope: "read" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("nothing was done");
    // Nothing changed: the key is still active.
    await page.reload();
    expect(await page.content()).not.toContain("Replayed");
    // Bad input gets a clear 4xx, the form kept; nothing is made.
    const bad: [Record<string, string>, number, string][] = [
      [{ csrf, name: " ", scope: "read" }, 400, "Give the key a name of 1 to 100 characters."],
      [{ csrf, name: "x".repeat(101), scope: "read" }, 400, "Give the key a name of 1 to 100 characters."],
      [{ csrf, name: "Bad scope", scope: "admin" }, 400, "Choose the key&apos;s scope: read or full."],
      [{ csrf, name: "Past", scope: "read", expires: "2020-01-01" }, 400, "The expiry must be a day after today"],
      [
        { csrf, name: "Not a date", scope: "read", expires: "2027-02-30" },
        400,
        "The expiry must be a date (YYYY-MM-DD), or empty.",
      ],
    ];
    for (const [fields, status, says] of bad) {
      const r = await post("/dashboard/keys", fields);
      expect([r.status, await r.text()]).toEqual([status, expect.stringContaining(says)]);
    }
    const json = await fetch(`${base}/dashboard/keys`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ csrf, name: "j" }),
    });
    expect(json.status).toBe(415);
    // The media type is compared whole (parameters aside), not as a prefix.
    const typed = (type: string) =>
      post("/dashboard/keys", { csrf, name: "", scope: "read" }, { "content-type": type }).then((r) => r.status);
    expect(await typed("application/x-www-form-urlencoded-but-not")).toBe(415);
    expect(await typed("application/x-www-form-urlencodedX; charset=utf-8")).toBe(415);
    expect(await typed("Application/X-WWW-Form-Urlencoded; charset=UTF-8")).toBe(400);
    expect((await fetch(`${base}/dashboard/keys`, { method: "PUT", headers: { cookie } })).headers.get("allow")).toBe(
      "POST, GET, HEAD",
    );
    expect((await fetch(`${base}/dashboard/sign-in`, { method: "PUT" })).headers.get("allow")).toBe("GET, HEAD, POST");
    expect((await fetch(`${base}/dashboard/nothing`, { headers: { cookie } })).status).toBe(404);
    expect((await fetch(`${base}/dashboard/keys/key_000000000000/revoke`, { headers: { cookie } })).status).toBe(404);
    // A sign-in form without its cookie's token.
    expect(
      (
        await fetch(`${base}/dashboard/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: `token=${token}`,
        })
      ).status,
    ).toBe(403);

    const key = await apiKeyIn(data, "k", "ops");
    for (const headers of [
      { "x-api-key": key },
      { authorization: `Bearer ${key}` },
      { cookie: `tome_session=${key}` },
    ] as Record<string, string>[]) {
      const r = await fetch(`${base}/dashboard`, { headers, redirect: "manual" });
      expect([r.status, r.headers.get("location")]).toEqual([303, "/dashboard/sign-in"]);
    }

    // The cookies: HttpOnly, SameSite=Strict, an expiry; Secure behind HTTPS (X-Forwarded-Proto).
    const plain = (await fetch(`${base}/dashboard/sign-in`)).headers.get("set-cookie")!;
    expect(plain).toMatch(/^tome_sign_in=[\w-]{43}; Path=\/dashboard; Max-Age=3600; HttpOnly; SameSite=Strict$/);
    const secure = (await fetch(`${base}/dashboard/sign-in`, { headers: { "x-forwarded-proto": "https" } })).headers;
    expect(secure.get("set-cookie")).toMatch(
      /^__Secure-tome_sign_in=[\w-]{43}; Path=\/dashboard; Max-Age=3600; Secure; HttpOnly; SameSite=Strict$/,
    );
    expect(secure.get("strict-transport-security")).toBe("max-age=31536000");
    const session = (await page.browserContext().cookies()).find((c) => c.name === "tome_session")!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/dashboard", session: false });
    expect(session.expires * 1000 - Date.now()).toBeGreaterThan(7 * 3600_000);

    const headers = (await fetch(`${base}/dashboard/sign-in`)).headers;
    expect(headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(headers.get("cache-control")).toBe("no-store");
    expect(headers.get("access-control-allow-origin")).toBeNull();
    // Not part of the API: none of its routes in the OpenAPI document (a read key's 403 may name it, as where to get a key).
    const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).length).toBeGreaterThan(5);
    expect(Object.keys(document.paths).filter((path) => path.includes("dashboard"))).toEqual([]);
    await page.close();
  });

  test("with JavaScript off: sign in, create, list and revoke all work", async () => {
    await roomFor(30); // 18 sent when counted
    const page = await newPage(false);
    expect(await signIn(page, base, token)).toBe(200);
    await revoke(page, "One");
    expect(await submit(page, "form[action$='/revoke'] button[type=submit]")).toBe(200);
    expect((await rowOf(page, "One")).State).toBe("Revoked");
    const made = await createKey(page, "No script", "full");
    expect(made).toEqual({ status: 201, key: expect.stringMatching(/^wk_/) });
    // Without the script the copy button stays hidden; the key is in a field to select.
    expect(await page.evaluate(`getComputedStyle(document.querySelector("button[data-copy]")).display`)).toBe("none");
    await shoot(page, "key-created-no-js");
    await page.close();
  });

  test('the sentence that opens the operator\'s "Give an account the dashboard" stands apart from its form at 1280 and 375 px: it ran into the Account label', async () => {
    await roomFor(10); // 4 sent when counted
    const page = await newPage();
    expect(await signIn(page, base, ADMIN_TOKEN)).toBe(200);
    const gaps: Record<number, number> = {};
    for (const width of [1280, 375]) {
      await page.setViewport({ width, height: 800 });
      gaps[width] = await page.$eval(
        "#access-title + p",
        (p) => p.nextElementSibling!.getBoundingClientRect().top - p.getBoundingClientRect().bottom,
      );
    }
    expect(Object.entries(gaps).filter(([, gap]) => gap < 8)).toEqual([]);
    await page.close();
  });

  test("the operator's view: every account, change a plan, give an account the dashboard", async () => {
    await roomFor(40); // 30 sent when counted
    const page = await newPage();
    expect(await signIn(page, base, ADMIN_TOKEN)).toBe(200);
    expect(await page.$eval("h1", (el) => el.textContent)).toBe("Accounts");
    const accounts = await page.$$eval("table.keys tbody tr td[data-label=Account]", (tds) =>
      tds.map((td) => td.textContent),
    );
    // Every account the store holds, in name order: the earlier tests of this server add accounts of their own.
    expect(accounts).toEqual(Object.keys(readKeyFile(keysPath(data)).accounts).sort());
    expect(accounts).toEqual(expect.arrayContaining(["acme", "mobile", "ops"]));
    await shoot(page, "operator");
    await page.select("#plan-acme", "starter");
    expect(await submit(page, "form[action='/dashboard/accounts/acme/plan'] button")).toBe(200);
    // The change answers 303 back to the page, which says what changed (a reload sends nothing again).
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/dashboard?plan=acme");
    expect(await page.$eval("[role=status]", (el) => el.textContent)).toBe("Account acme is now on the starter plan.");
    const csrf = await page.$eval("input[name=csrf]", (el) => el.getAttribute("value")!);
    const changed = await fetch(`${base}/dashboard/accounts/acme/plan`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: await cookieHeader(page), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, plan: "starter" }),
    });
    expect([changed.status, changed.headers.get("location")]).toEqual([303, "/dashboard?plan=acme"]);
    // A plan smaller than the keys held: they stay, and the page says so (it said only the new plan).
    updateKeyFile(data, (f) => {
      for (const name of ["a", "b", "c", "d"])
        addKey(f, { name, account: "many", plan: "starter", scope: "read", now: Date.now() });
    });
    const cookie = await cookieHeader(page);
    const smaller = await fetch(`${base}/dashboard/accounts/many/plan`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, plan: "free" }),
    });
    expect(smaller.status).toBe(303);
    expect(await (await fetch(`${base}/dashboard?plan=many`, { headers: { cookie } })).text()).toContain(
      "Account many is now on the free plan. It holds 4 active keys, more than the 3 the plan allows: they keep working, but no key can be made for it until fewer than 3 are active.",
    );
    await page.type("#account", "globex");
    expect(await submit(page, "form[action='/dashboard/accounts'] button")).toBe(201);
    const issued = await page.$eval("#new-key", (el) => (el as unknown as { value: string }).value);
    expect(issued).toMatch(/^wd_[A-Za-z0-9]{32}\.globex$/);
    await shoot(page, "operator-issued");
    await page.close();
    // The holder signs in with it.
    const holder = await newPage();
    expect(await signIn(holder, base, issued)).toBe(200);
    expect(await holder.$eval("h1", (el) => el.textContent)).toBe("globex");
    await holder.close();
  });

  test("every page passes axe-core's WCAG 2.1 A and AA checks (labels, contrast, landmarks, names), at 1280 and at 375 px wide", async () => {
    await roomFor(65); // 50 sent when counted
    const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
    /** Violations on the page as it is at a desktop's width and a small phone's (its own layout: keys as cards). */
    const audit = async (page: Page) => {
      await page.addScriptTag({ content: AXE });
      const found: string[] = [];
      for (const width of [1280, 375]) {
        await page.setViewport({ width, height: 900 });
        found.push(...(await auditNow(page)).map((v) => `${width}px ${v}`));
      }
      await page.setViewport(WIDTHS.desktop);
      return found;
    };
    /** Violations on the page as it is: rule id, then the first offending element. */
    const auditNow = async (page: Page) => {
      return page.evaluate(async () => {
        type Result = { id: string; nodes: { html: string }[] }[];
        const axe = (
          globalThis as unknown as { axe: { run(o: object): Promise<{ violations: Result; passes: Result }> } }
        ).axe;
        const { violations, passes } = await axe.run({
          runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
        });
        // A page axe found nothing to check on would pass by saying nothing.
        if (!passes.some((p) => p.id === "color-contrast")) return ["axe checked no contrast"];
        return violations.map((v) => `${v.id}: ${v.nodes[0]?.html}`);
      });
    };
    const page = await newPage();
    // Only so that axe's own script may be added to the page: the pages' CSP stands everywhere else.
    await page.setBypassCSP(true);
    await page.goto(`${base}/dashboard/sign-in`);
    const found: Record<string, string[]> = { "sign-in": await audit(page) };
    expect(await signIn(page, base, token)).toBe(200);
    found.account = await audit(page);
    await revoke(page, "Two");
    found["revoke-confirm"] = await audit(page);
    await page.goto(`${base}/dashboard`);
    expect((await createKey(page, "Audited")).status).toBe(201);
    found["key-created"] = await audit(page);
    expect(await submit(page, "form[action='/dashboard/sign-out'] button")).toBe(200);
    expect(await signIn(page, base, "wrong")).toBe(401);
    found["sign-in-error"] = await audit(page);
    expect(await signIn(page, base, ADMIN_TOKEN)).toBe(200);
    found.operator = await audit(page);
    expect(found).toEqual({
      "sign-in": [],
      account: [],
      "revoke-confirm": [],
      "key-created": [],
      "sign-in-error": [],
      operator: [],
    });
    await page.close();
  });

  test("a replaced token, and every session made with it, stop working", async () => {
    await roomFor(40); // 29 sent when counted
    const page = await newPage();
    expect(await signIn(page, base, token)).toBe(200);
    const cookie = await cookieHeader(page);
    // As `bun run keys account token --account acme` replaces it (test/keys.test.ts runs the command itself).
    const replaced = updateKeyFile(data, (file) => replaceAccountToken(file, "acme")).token;
    expect((await fetch(`${base}/dashboard`, { headers: { cookie }, redirect: "manual" })).status).toBe(303);
    expect(await signIn(page, base, token)).toBe(401);
    expect(await signIn(page, base, replaced)).toBe(200);
    await page.close();
  });

  test("failed sign-ins are limited per client address (429), whatever account the tokens name", async () => {
    await roomFor(60); // 45 sent when counted
    const attempt = (token: string, headers: Record<string, string> = {}) => signInAttempt(base, token, headers);
    // Many wrong tokens naming one account are the address's failures, not the account's (D83): no 429 at 11.
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push(await attempt(wrong("globex")));
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    // Counting this file's earlier failures too, the address is refused for any account at its 21st.
    let status = 0;
    for (let i = 0; i < ADDRESS_FAILURES && status !== 429; i++) status = await attempt(wrong(`other${i}`));
    expect(status).toBe(429);
    // No proxy is trusted (TOME_TRUSTED_PROXIES unset): an X-Forwarded-For of another address changes nothing (D80).
    expect(await attempt(wrong("spoofer"), { "x-forwarded-for": "198.51.100.7" })).toBe(429);
    const page = await newPage();
    expect(await signIn(page, base, token)).toBe(429);
    expect(await page.$eval("[role=alert]", (el) => el.textContent)).toContain(
      "Too many failed sign-ins from your address",
    );
    await page.close();
  });

  test("a form's body is counted while it arrives: a chunked one past 8 KB is refused (413) before it ends, and not read on", async () => {
    await roomFor(5); // 1 sent when counted
    const { hostname, port } = new URL(base);
    const socket = connect(Number(port), hostname);
    const hungUp = new Promise<true>((resolve) => socket.on("close", () => resolve(true)));
    const answered = new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        if (text.includes("\r\n\r\n")) resolve(text);
      });
      socket.on("close", () => resolve(text));
      socket.on("error", () => resolve(text));
    });
    socket.write(
      "POST /dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    // 64 KB in 4 KB chunks, and the body never ends: a server that reads it whole before its check never answers.
    const chunk = `1000\r\n${"token=".padEnd(4096, "A")}\r\n`;
    for (let i = 0; i < 16; i++) socket.write(chunk);
    const head = await Promise.race([answered, Bun.sleep(5000).then(() => "no answer within 5 s")]);
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
    // And the server hangs up: what the client sends on is not taken.
    expect(head.toLowerCase()).toContain("connection: close");
    expect(await Promise.race([hungUp, Bun.sleep(5000).then(() => "still open after 5 s")])).toBe(true);
    socket.destroy();
  });
});

describe("behind a trusted proxy (D80)", () => {
  let server: { url: string; stop: () => Promise<void> };
  let data: string;

  beforeAll(async () => {
    data = tempDir("tome-dash-proxy-");
    // The test's requests come from this machine (127.0.0.1 or ::1), as a proxy's on it would.
    server = await serveInProcess(data, { trustedProxies: ["127.0.0.1", "::1"], adminToken: ADMIN_TOKEN });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const from = (client: string, hops = "") => ({ "x-forwarded-for": `${hops}${client}` });

  test("failed sign-ins are limited per client the proxy names, not for every client behind it", async () => {
    let status = 0;
    let tries = 0;
    for (; tries < ADDRESS_FAILURES + 5 && status !== 429; tries++)
      status = await signInAttempt(server.url, wrong(`mallory${tries}`), from("203.0.113.5"));
    expect({ status, tries }).toEqual({ status: 429, tries: ADDRESS_FAILURES + 1 });
    // Another client behind the same proxy still signs in (a wrong token: 401, not 429).
    expect(await signInAttempt(server.url, wrong("alice"), from("203.0.113.6"))).toBe(401);
    // The limited client cannot get out by writing another address before the one the proxy appends.
    expect(await signInAttempt(server.url, wrong("mallory-again"), from("203.0.113.5", "203.0.113.99, "))).toBe(429);
  });

  test("IPv6 clients are counted per /64 (D83): another address of the same /64 is refused too, another /64 is not", async () => {
    const statuses = [];
    for (let n = 1; n <= ADDRESS_FAILURES + 1; n++)
      statuses.push(await signInAttempt(server.url, wrong(`eve${n}`), from(`2001:db8:1:2::${n.toString(16)}`)));
    expect(statuses.at(-1)).toBe(429);
    expect(await signInAttempt(server.url, wrong("eve"), from("2001:db8:1:2:ffff:ffff:ffff:ffff"))).toBe(429);
    expect(await signInAttempt(server.url, wrong("eve"), from("2001:db8:1:3::1"))).toBe(401);
  });

  test("strangers naming an account cannot lock its holder out (D83): no limit per account", async () => {
    const token = issueToken(data, "alice", "free");
    for (let i = 0; i < 15; i++)
      expect(await signInAttempt(server.url, wrong("alice"), from(`198.51.100.${100 + i}`))).toBe(401);
    expect(await signInAttempt(server.url, token, from("192.0.2.10"))).toBe(303);
  });

  test("guesses at the operator's token are limited from all addresses together (D83); the operator still signs in where it did before", async () => {
    const operatorAt = "192.0.2.40";
    expect(await signInAttempt(server.url, ADMIN_TOKEN, from(operatorAt))).toBe(303);
    // 6 addresses, each under its own limit: 102 guesses together; past OPERATOR_FAILURES (100) they are refused unheard.
    const statuses: number[] = [];
    for (let a = 1; a <= 6; a++) {
      const form = await signInForm(server.url, from(`198.51.100.${a}`));
      for (let i = 0; i < 17; i++)
        statuses.push(
          (await postSignIn(server.url, form, `guess-${a}-${i}-0123456789abcdef`, from(`198.51.100.${a}`))).status,
        );
    }
    expect(statuses).toEqual([...Array(100).fill(401), 429, 429]);
    // The right token from a new address is refused, as any guess is now; from the operator's address it is taken.
    expect(await signInAttempt(server.url, ADMIN_TOKEN, from("192.0.2.41"))).toBe(429);
    expect(await signInAttempt(server.url, ADMIN_TOKEN, from(operatorAt))).toBe(303);
    // Accounts' tokens are not held back by it.
    const token = issueToken(data, "bob", "free");
    expect(await signInAttempt(server.url, token, from("192.0.2.42"))).toBe(303);
  });
});

describe("a store of 50,000 keys (D81)", () => {
  let server: ServerProcess;
  let token: string;
  let storeBytes: number;

  beforeAll(async () => {
    const data = tempDir("tome-dash-large-");
    // 5,000 accounts of 10 keys each, written as the key tool writes the store.
    updateKeyFile(data, (file) => {
      for (let a = 0; a < 5000; a++) {
        const account = `acct-${String(a).padStart(5, "0")}`;
        file.accounts[account] = { plan: "growth" };
        for (let k = 0; k < 10; k++)
          file.keys.push({
            id: `key_${account.slice(5)}k${k}`,
            hash: createHash("sha256").update(`${account}/${k}`).digest("hex"),
            name: `key ${k}`,
            account,
            scopes: ["read"],
            created_at: "2026-01-01T00:00:00.000Z",
            expires_at: null,
            revoked_at: null,
          });
      }
    });
    token = issueToken(data, "acme", "free");
    storeBytes = statSync(join(data, "keys.json")).size;
    server = await startServer({
      TOME_DATA: data,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016] }),
      TOME_ADMIN_TOKEN: ADMIN_TOKEN,
      ...NO_SEARCH_THREADS, // no search asked (the replicas, searched, keep their threads)
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Bytes the server process has read (read(2) and the like, sockets included) since it started. */
  const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${server.pid}/io`, "utf8"))![1]);

  test("signing in, wrongly or not, and an account's page read no key store: one lookup of the account", async () => {
    expect(storeBytes).toBeGreaterThan(10_000_000);
    const before = bytesRead();
    const form = await signInForm(server.url);
    for (let i = 0; i < 5; i++) expect((await postSignIn(server.url, form, wrong("acme"))).status).toBe(401);
    expect((await postSignIn(server.url, form, wrong("acct-00042"))).status).toBe(401);
    const signedIn = await postSignIn(server.url, form, token);
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("tome_session="))!
      .split(";")[0]!;
    const page = await fetch(`${server.url}/dashboard`, { headers: { cookie } });
    expect([page.status, await page.text()]).toEqual([200, expect.stringContaining("No keys yet")]);
    // Every one of them reading keys.json would be 8 whole stores; the requests themselves are a few KB.
    expect(bytesRead() - before).toBeLessThan(storeBytes / 10);
  });

  test("the operator's page shows 50 accounts at a time, the next ones a link away, reading no key store", async () => {
    const before = bytesRead();
    const signedIn = await postSignIn(server.url, await signInForm(server.url), ADMIN_TOKEN);
    const cookie = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("tome_session="))!
      .split(";")[0]!;
    const first = await (await fetch(`${server.url}/dashboard`, { headers: { cookie } })).text();
    const accounts = (html: string) =>
      [...html.matchAll(/<td data-label="Account"><strong>([^<]+)</g)].map((m) => m[1]);
    expect(accounts(first)).toEqual(Array.from({ length: 50 }, (_, a) => `acct-${String(a).padStart(5, "0")}`));
    expect(first).toContain('href="/dashboard?after=acct-00049"');
    const next = await (await fetch(`${server.url}/dashboard?after=acct-00049`, { headers: { cookie } })).text();
    expect(accounts(next)[0]).toBe("acct-00050");
    expect(accounts(next).length).toBe(50);
    expect(bytesRead() - before).toBeLessThan(storeBytes / 10);
  });
});

describe("an account of 10,000 keys (D82)", () => {
  let app: App;
  let token: string;
  const names: string[] = [];
  // The app's clock, moved past D82's 10 s window before each request: a holder paging through 200 pages at once
  // would be told to slow down (429), which is not what this test is about.
  let t = Date.now();

  beforeAll(async () => {
    const data = tempDir("tome-dash-many-");
    token = updateKeyFile(data, (f) => {
      const made = createAccountAccess(f, "acme", "enterprise").token;
      for (let k = 0; k < 10_000; k++) {
        const name = `Key ${String(k).padStart(5, "0")}`;
        names.push(name);
        f.keys.push({
          id: `key_many${String(k).padStart(5, "0")}`,
          hash: createHash("sha256").update(`acme/${k}`).digest("hex"),
          name,
          account: "acme",
          scopes: ["read"],
          // Ten keys a millisecond (their order is then their ids'), one in seven revoked.
          created_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(k / 10)).toISOString(),
          expires_at: null,
          revoked_at: k % 7 === 0 ? "2026-02-01T00:00:00.000Z" : null,
        });
      }
      // Stored out of order (by hash, a shuffle that stays the same each run): stored in id order, a stable sort kept
      // each millisecond's keys in it without the tie-break by id, and the test could not tell it was there.
      f.keys.sort((x, y) => (x.hash < y.hash ? -1 : 1));
      return made;
    });
    const access = new Access({ dataDir: data, keyMsPerSecond: 0, now: () => t });
    app = createApp(await engineFor({ dumps: [EN_2016] }), { access, accounts: access.accounts() });
  });
  afterAll(() => app?.close());

  const { handle, sessionCookie } = inProcess(() => app);
  const page = (path: string, cookie: string) => {
    t += 10_001;
    return handle(path, { headers: { cookie } });
  };

  test("its page lists KEYS_PER_PAGE keys, the next ones a link away (?offset=): every key is reached once, each page stays small (all 10,000 made a page of 6 MB)", async () => {
    const cookie = await sessionCookie(token);
    const seen: string[] = [];
    let next: string | undefined = "/dashboard";
    let pages = 0;
    while (next) {
      const answer = await page(next, cookie);
      expect(answer.status).toBe(200);
      const text = await answer.text();
      expect(text.length).toBeLessThan(60_000);
      const shown = [...text.matchAll(/<span class="key-name">([^<]+)<\/span>/g)].map((m) => m[1]!);
      expect(shown.length).toBe(pages < 199 ? KEYS_PER_PAGE : 10_000 - 199 * KEYS_PER_PAGE);
      seen.push(...shown);
      next = /<a class="button" href="([^"]+)">Next keys<\/a>/.exec(text)?.[1];
      pages++;
    }
    expect(pages).toBe(10_000 / KEYS_PER_PAGE);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.toSorted()).toEqual(names);
    // Active first, newest first, then by id: the newest millisecond's first active key leads (09990 to 09999 were made
    // in one), the oldest millisecond's last revoked one ends the list (00000 and 00007 were revoked).
    expect([seen[0], seen.at(-1)]).toEqual(["Key 09990", "Key 00007"]);
    const later = await (await page(`/dashboard?offset=${KEYS_PER_PAGE}`, cookie)).text();
    expect(later).toContain(`Keys ${KEYS_PER_PAGE + 1} to ${2 * KEYS_PER_PAGE} of 10,000.`);
    expect(later).toContain('<a class="button quiet" href="/dashboard">First page</a>');
  });

  test("an offset past the last key is a page without keys that says so; one that is not digits, or given twice, is refused (400), as the API refuses it (D3)", async () => {
    const cookie = await sessionCookie(token);
    const past = await page("/dashboard?offset=20000", cookie);
    expect(past.status).toBe(200);
    const text = await past.text();
    expect(text).toContain("No keys here: your account has 10,000, and this page starts past them.");
    expect(text).not.toContain('class="key-name"');
    // Read by the API's own rule (params.ts): leading zeros are digits too (a copy of the rule refused past 16 digits).
    const padded = await (await page(`/dashboard?offset=${String(KEYS_PER_PAGE).padStart(19, "0")}`, cookie)).text();
    expect(padded).toContain(`Keys ${KEYS_PER_PAGE + 1} to ${2 * KEYS_PER_PAGE} of 10,000.`);
    for (const bad of ["offset=-1", "offset=1e3", "offset=%2050", "offset=99999999999999999", "offset=1&offset=2"]) {
      const refused = await page(`/dashboard?${bad}`, cookie);
      expect([bad, refused.status]).toEqual([bad, 400]);
      expect(await refused.text()).toContain("The offset of a page of keys is the number of keys before it");
    }
  });
});

describe("dashboard requests are limited and charged (D82)", () => {
  let server: ServerProcess;
  let data: string;
  let apiKey: string;

  beforeAll(async () => {
    data = tempDir("tome-dash-limits-");
    apiKey = await apiKeyIn(data, "other", "other", "enterprise");
    server = await startServer({
      TOME_DATA: data,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016] }),
      TOME_TRUSTED_PROXIES: "127.0.0.1,::1",
      // A share of 1 ms a second: a few dashboard requests use it up while a key uses the server too.
      TOME_KEY_MS_PER_SECOND: "1",
      ...NO_SEARCH_THREADS,
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const get = async (path: string, headers: Record<string, string>) => {
    const r = await fetch(`${server.url}${path}`, { headers, redirect: "manual" });
    return { status: r.status, retry: r.headers.get("retry-after"), text: await r.text() };
  };

  test("per client address: past its requests in a window, 429 with Retry-After", async () => {
    let answer = await get("/dashboard/sign-in", { "x-forwarded-for": "203.0.113.77" });
    // 300 requests span two windows at most: one of them holds more than its limit.
    for (let i = 0; i < 300 && answer.status === 200; i++)
      answer = await get("/dashboard/sign-in", { "x-forwarded-for": "203.0.113.77" });
    expect(answer.status).toBe(429);
    expect(Number(answer.retry)).toBeWithin(1, 11);
    expect(answer.text).toContain("Too many requests from your address.");
    expect((await get("/dashboard/sign-in", { "x-forwarded-for": "203.0.113.78" })).status).toBe(200);
  });

  test("per session, from any number of addresses", async () => {
    const token = issueToken(data, "acme", "free");
    const signedIn = await postSignIn(server.url, await signInForm(server.url), token, {
      "x-forwarded-for": "192.0.2.1",
    });
    const cookie = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("tome_session="))!
      .split(";")[0]!;
    await Bun.sleep(1100); // alone on the server: the work share does not bind
    let answer = await get("/dashboard", { cookie, "x-forwarded-for": "192.0.2.2" });
    for (let i = 3; i < 300 && answer.status === 200; i++)
      answer = await get("/dashboard", { cookie, "x-forwarded-for": `192.0.2.${i % 250}` });
    expect(answer.status).toBe(429);
    expect(answer.text).toContain("Too many requests in this session.");
  });

  test("each request's time is charged to the work share the API's keys share: past it, while a key uses the server, 429", async () => {
    let answer = { status: 200, retry: null as string | null, text: "" };
    for (let i = 0; i < 100 && answer.status === 200; i++) {
      await fetch(`${server.url}/v1/chunk/1`, { headers: { "x-api-key": apiKey } }).then((r) => r.arrayBuffer());
      answer = await get("/dashboard/sign-in", { "x-forwarded-for": "203.0.113.88" });
    }
    expect(answer.status).toBe(429);
    expect(Number(answer.retry)).toBeGreaterThan(0);
    expect(answer.text).toContain("used their share of the server");
  });
});

describe("a flood of addresses from one IPv6 /48 (D82, D83)", () => {
  test("10,020 failed sign-ins from as many /64s of one /48 fill the counts: a holder elsewhere still signs in, the flood's next /64 is refused", async () => {
    const data = tempDir("tome-dash-flood-");
    const holder = updateKeyFile(data, (f) => createAccountAccess(f, "acme", "free").token);
    // One instant: every request falls in one window of each count. In process, "unknown" is the socket's address.
    const now = Date.UTC(2026, 10, 15, 12);
    const access = new Access({ dataDir: data, now: () => now, keyMsPerSecond: 0, log: () => {} });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), {
      access,
      accounts: access.accounts(),
      trustedProxies: ["unknown"],
    });
    try {
      const from = (address: string) => ({ host: "localhost", "x-forwarded-for": address });
      const form = await app.handle(new Request("http://localhost/dashboard/sign-in", { headers: from("192.0.2.1") }));
      const csrf = csrfOf(await form.clone().text());
      const guess = (address: string) =>
        app.handle(
          new Request("http://localhost/dashboard/sign-in", {
            method: "POST",
            headers: { ...from(address), cookie: cookieOf(form), "content-type": FORM },
            body: new URLSearchParams({ csrf, token: `wd_${"x".repeat(32)}.acme` }),
          }),
        );
      for (let i = 0; i < MAX_COUNTED_ADDRESSES + ADDRESS_FAILURES; i++) {
        const r = await guess(`2001:db8:1:${i.toString(16)}::1`);
        expect(r.status).toBe(401);
        await r.arrayBuffer();
      }
      expect((await guess("2001:db8:1:ffff::1")).status).toBe(429);
      expect((await dashboardSignIn(app, holder, from("2001:db8:2::1"))).status).toBe(303);
      expect((await dashboardSignIn(app, holder, from("198.51.100.7"))).status).toBe(303);
    } finally {
      app.close();
    }
  });
});

describe("two replicas on one Redis", () => {
  let redis: RedisServer;
  let replicas: ServerProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    const snapshot = await snapshotFor({ dumps: [EN_2016] });
    replicas = [
      await startServer({ TOME_REDIS_URL: redis.url, TOME_SNAPSHOT: snapshot }),
      await startServer({ TOME_REDIS_URL: redis.url, TOME_SNAPSHOT: snapshot }),
    ];
  });
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await redis?.stop();
  });

  test("signing in, an account's page and a new key read that account only: no command reads a whole hash (D81)", async () => {
    const [a] = replicas.map((r) => r.url) as [string];
    const token = await issueRedisToken({ TOME_REDIS_URL: redis.url }, "umbrella", "growth");
    /** Calls of each command Redis has run (scripts' commands included), by name. */
    const calls = () =>
      Object.fromEntries(
        [...redis.cli("INFO", "commandstats").matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map((m) => [
          m[1]!,
          Number(m[2]),
        ]),
      );
    const before = calls();
    const form = await signInForm(a);
    expect((await postSignIn(a, form, wrong("umbrella"))).status).toBe(401);
    const signedIn = await postSignIn(a, form, token);
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("tome_session="))!
      .split(";")[0]!;
    const page = await (await fetch(`${a}/dashboard`, { headers: { cookie } })).text();
    const csrf = csrfOf(page);
    const made = await fetch(`${a}/dashboard/keys`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, name: "Umbrella bot", scope: "read" }),
    });
    expect(made.status).toBe(201);
    const after = calls();
    const ran = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
    expect({ hgetall: ran("hgetall"), hvals: ran("hvals"), hkeys: ran("hkeys"), hscan: ran("hscan") }).toEqual({
      hgetall: 0,
      hvals: 0,
      hkeys: 0,
      hscan: 0,
    });
    // It did look the account up.
    expect(ran("hget")).toBeGreaterThan(0);
  });

  test("sign in and revoke on one replica: the other refuses the key at once (403), and shares the session and the usage", async () => {
    const [a, b] = replicas.map((r) => r.url) as [string, string];
    const token = await issueRedisToken({ TOME_REDIS_URL: redis.url }, "initech", "growth");
    const page = await newPage();
    expect(await signIn(page, a, token)).toBe(200);
    const made = await createKey(page, "Replicated");
    expect(made.status).toBe(201);
    expect(await search(b, made.key)).toBe(200);
    expect(await search(a, made.key)).toBe(200);
    // The other replica serves the same session, and sees both requests.
    await page.goto(`${b}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await rowOf(page, "Replicated")).toMatchObject({ State: "Active", Requests: "2", Credits: "2" });
    await shoot(page, "redis-account");
    await page.goto(`${a}/dashboard`);
    await revoke(page, "Replicated");
    expect(await submit(page, "form[action$='/revoke'] button[type=submit]")).toBe(200);
    expect(await search(b, made.key)).toBe(403);
    expect(await search(a, made.key)).toBe(403);
    // Redis gone: the dashboard says so (503, nothing changed), as the API does.
    const cookie = await cookieHeader(page);
    await redis.kill();
    const down = await fetch(`${b}/dashboard`, { headers: { cookie } });
    expect([down.status, down.headers.get("retry-after")]).toEqual([503, "5"]);
    expect(await down.text()).toContain("cannot reach its store of keys right now; nothing was changed");
    await page.close();
  });
});

/**
 * A request to the in-process app `app()` gives (a group's own, made in its beforeAll), and `sessionCookie(token)`:
 * `token` signed in, the session's Cookie header.
 */
function inProcess(app: () => App) {
  const handle = (path: string, init: RequestInit = {}) =>
    app().handle(new Request(`http://localhost${path}`, { ...init, headers: { host: "localhost", ...init.headers } }));
  async function sessionCookie(signInToken: string): Promise<string> {
    const signedIn = await dashboardSignIn(app(), signInToken, { host: "localhost" });
    expect(signedIn.status).toBe(303);
    return cookieOf(signedIn);
  }
  return { handle, sessionCookie };
}

/** Its own app, so its own counts of requests (D82: 100 in 10 s from one address; in process, every request is one). */
describe("in process: forms' origins, refusals and addresses", () => {
  let app: App;
  let token: string;

  beforeAll(async () => {
    const data = tempDir("tome-dash-forms-");
    token = updateKeyFile(data, (f) => createAccountAccess(f, "acme", "free").token);
    app = await appWithAccounts(data, { dumps: [EN_2016] }, { adminToken: ADMIN_TOKEN });
  });
  afterAll(() => app?.close());

  const { handle, sessionCookie } = inProcess(() => app);

  test("a form sent without an Origin but with another site's Referer is refused (403): sign-in and sign-out took it", async () => {
    const cookie = await sessionCookie(token);
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const foreign = { referer: "http://evil.example/page" };
    const signOut = (headers: Record<string, string>) =>
      handle("/dashboard/sign-out", {
        method: "POST",
        headers: { "content-type": FORM, cookie, ...headers },
        body: new URLSearchParams({ csrf }),
      });
    // A Referer that is not a URL is no page of this server's either.
    for (const referer of [foreign.referer, "https://localhost/dashboard", "not a url"])
      expect((await signOut({ referer })).status).toBe(403);
    expect((await handle("/dashboard", { headers: { cookie } })).status).toBe(200); // still signed in
    const form = await handle("/dashboard/sign-in");
    const signIn = await handle("/dashboard/sign-in", {
      method: "POST",
      headers: { "content-type": FORM, cookie: cookieOf(form), ...foreign },
      body: new URLSearchParams({ csrf: csrfOf(await form.text()), token }),
    });
    expect(signIn.status).toBe(403);
    // This server's own page as the Referer, or none at all (a client that sends neither): the CSRF token decides.
    expect((await signOut({ referer: "http://localhost/dashboard" })).status).toBe(303);
  });

  test("the operator's issue form refused for its account's name gives back what was typed (the name and the plan), not an empty form", async () => {
    const cookie = await sessionCookie(ADMIN_TOKEN);
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const refused = await handle("/dashboard/accounts", {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf, account: "Acme Corp <b>", plan: "growth" }),
    });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(/<input id="account"[^>]*>/.exec(page)?.[0]).toContain('value="Acme Corp &lt;b&gt;"');
    expect(/<select id="new-plan"[\s\S]*?<\/select>/.exec(page)?.[0]).toContain('<option value="growth" selected>');
  });

  test("a sign-in form sent after its cookie expired (an hour) is answered with the form again, ready to sign in, not a page sending the person back to reload it", async () => {
    const form = await handle("/dashboard/sign-in");
    const sent = await handle("/dashboard/sign-in", {
      method: "POST",
      headers: { "content-type": FORM }, // the cookie gone: the browser dropped it at its Max-Age
      body: new URLSearchParams({ csrf: csrfOf(await form.text()), token }),
    });
    expect(sent.status).toBe(403);
    const again = await sent.text();
    expect(again).toContain('<input id="token" name="token"');
    expect(again).toContain("This sign-in form had expired");
    const signedIn = await handle("/dashboard/sign-in", {
      method: "POST",
      headers: { "content-type": FORM, cookie: cookieOf(sent) },
      body: new URLSearchParams({ csrf: csrfOf(again), token }),
    });
    expect(signedIn.status).toBe(303);
  });

  test('the address a form\'s answer leaves in the address bar, opened again, is the dashboard (303), not 405 "This page takes POST only"', async () => {
    const cookie = await sessionCookie(token);
    const page = await (await handle("/dashboard", { headers: { cookie } })).text();
    // A refused create is answered in place: the address bar then reads /dashboard/keys.
    const refused = await handle("/dashboard/keys", {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf: csrfOf(page), name: " ", scope: "read" }),
    });
    expect(refused.status).toBe(400);
    const opened: Record<string, unknown> = {};
    for (const path of ["/dashboard/keys", "/dashboard/accounts", "/dashboard/accounts/acme/plan"]) {
      const r = await handle(path, { headers: { cookie } });
      opened[path] = [r.status, r.headers.get("location")];
    }
    expect(opened).toEqual({
      "/dashboard/keys": [303, "/dashboard"],
      "/dashboard/accounts": [303, "/dashboard"],
      "/dashboard/accounts/acme/plan": [303, "/dashboard"],
    });
  });
});

describe("in process (app.handle)", () => {
  let app: App;
  let token: string;
  let data: string;

  beforeAll(async () => {
    data = tempDir("tome-dash-app-");
    token = updateKeyFile(data, (f) => createAccountAccess(f, "acme", "free").token);
    app = await appWithAccounts(data, { dumps: [EN_2016] }, { adminToken: ADMIN_TOKEN });
  });
  afterAll(() => app?.close());

  const { handle, sessionCookie } = inProcess(() => app);

  test("a dashboard request's socket may stay silent for KEY_STORE_SOCKET_SECONDS (it may wait for a changed keys.json's read), as a keyed request's may", async () => {
    // The server as the app sees it: Bun's per-request idle timeout, recorded.
    const timeouts: number[] = [];
    const server = { timeout: (_request: Request, seconds: number) => timeouts.push(seconds), requestIP: () => null };
    const answer = await app.handle(
      new Request("http://localhost/dashboard/sign-in", { headers: { host: "localhost" } }),
      server as any,
    );
    expect(answer.status).toBe(200);
    // Before: none (the dashboard step answers before the steps that raise it), so Bun's 10 s closed it at a large store.
    expect(timeouts).toEqual([KEY_STORE_SOCKET_SECONDS]);
  });

  test("a sign-in form loaded in one tab still signs in after another tab loaded the form: the CSRF cookie is kept, not replaced", async () => {
    const first = await handle("/dashboard/sign-in");
    const csrf = csrfOf(await first.text());
    const second = await handle("/dashboard/sign-in", { headers: { cookie: cookieOf(first) } });
    const cookie = cookieOf(second);
    expect(cookie).toBe(`tome_sign_in=${csrf}`);
    const signedIn = await handle("/dashboard/sign-in", {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf, token }),
    });
    expect(signedIn.status).toBe(303);
  });

  test("the page says a key is revoked only when it is: /dashboard?revoked= naming an active key says nothing", async () => {
    const cookie = await sessionCookie(token);
    const page = await (await handle("/dashboard", { headers: { cookie } })).text();
    const csrf = csrfOf(page);
    const created = await handle("/dashboard/keys", {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf, name: "Production", scope: "read" }),
    });
    const id = /\/dashboard\/keys\/(key_\w+)\/revoke/.exec(await created.text())![1]!;
    const claimed = await (await handle(`/dashboard?revoked=${id}`, { headers: { cookie } })).text();
    expect(claimed).toContain('<span class="badge active">');
    expect(claimed).not.toContain("is revoked");
    const revoked = await handle(`/dashboard/keys/${id}/revoke`, {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf }),
    });
    expect(revoked.headers.get("location")).toBe(`/dashboard?revoked=${id}`);
    const said = await (await handle(`/dashboard?revoked=${id}`, { headers: { cookie } })).text();
    expect(said).toContain("The key “<bdi>Production</bdi>” is revoked");
  });

  test("a key's name inside a sentence is isolated (<bdi>): a right-to-left name does not reorder the sentence around it", async () => {
    const cookie = await sessionCookie(token);
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const name = "מפתח ראשי";
    const created = await (
      await handle("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, name, scope: "read" }),
      })
    ).text();
    expect(created).toContain(`Your new key “<bdi>${name}</bdi>”`);
    const id = /\/dashboard\/keys\/(key_\w+)\/revoke/.exec(created)![1]!;
    const confirm = await (await handle(`/dashboard/keys/${id}/revoke`, { headers: { cookie } })).text();
    expect(confirm).toContain(`Revoke “<bdi>${name}</bdi>”?`);
    await handle(`/dashboard/keys/${id}/revoke`, {
      method: "POST",
      headers: { "content-type": FORM, cookie },
      body: new URLSearchParams({ csrf }),
    });
    const said = await (await handle(`/dashboard?revoked=${id}`, { headers: { cookie } })).text();
    expect(said).toContain(`The key “<bdi>${name}</bdi>” is revoked`);
  });

  test("a create form sent again (a reload or Back of the page showing the new key) makes no second key: 409, saying so (D157)", async () => {
    const cookie = await sessionCookie(token);
    const page = await (await handle("/dashboard", { headers: { cookie } })).text();
    const form = new URLSearchParams({
      csrf: csrfOf(page),
      form: /name="form" value="([^"]+)"/.exec(page)![1]!,
      name: "Resent",
      scope: "read",
    });
    const send = () =>
      handle("/dashboard/keys", { method: "POST", headers: { "content-type": FORM, cookie }, body: form.toString() });
    const first = await send();
    expect(first.status).toBe(201);
    expect(await first.text()).toContain('id="new-key"');
    const again = await send();
    const said = await again.text();
    expect(again.status).toBe(409);
    expect(said).toContain("This form was sent before, and made the key “Resent” then: no other key was created");
    expect(said).not.toContain('id="new-key"');
    const rows = (await (await handle("/dashboard", { headers: { cookie } })).text()).match(/>Resent</g) ?? [];
    expect(rows).toHaveLength(1);
    // The page that answered carries a new form: it makes a key.
    form.set("form", /name="form" value="([^"]+)"/.exec(said)![1]!);
    expect((await send()).status).toBe(201);
  });

  test("a free account makes at most KEYS_A_DAY keys in 24 hours through the dashboard, revoked ones and the key tool's counted, and is told when it may make the next: keys.json, read whole by every change, is not grown without end by creating and revoking (D82)", async () => {
    const churn = updateKeyFile(data, (f) => createAccountAccess(f, "churn", "free").token);
    const cookie = await sessionCookie(churn);
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const create = (name: string) =>
      handle("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, name, scope: "read" }),
      });
    for (let i = 0; i < KEYS_A_DAY; i++) {
      const made = await create(`Churn ${i}`);
      expect(made.status).toBe(201);
      const id = /\/dashboard\/keys\/(key_\w+)\/revoke/.exec(await made.text())![1]!;
      const revoked = await handle(`/dashboard/keys/${id}/revoke`, {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf }),
      });
      expect(revoked.status).toBe(303);
    }
    // The oldest made 20 hours ago (at 15 s past a minute): the window rolls, so one more may be made when it is 24 hours old.
    const oldest = Math.floor((Date.now() - 20 * 3_600_000) / 60_000) * 60_000 + 15_000;
    updateKeyFile(data, (f) => {
      f.keys.find((k) => k.account === "churn")!.created_at = new Date(oldest).toISOString();
    });
    const refused = await create("One more");
    expect(refused.status).toBe(409);
    const said = await refused.text();
    expect(said).toContain(
      `Your account has made ${KEYS_A_DAY} keys in the last 24 hours (those your operator made included)`,
    );
    const from = new Date(oldest + 86_400_000 + 45_000).toISOString();
    expect(said).toContain(`You may create one from ${from.slice(0, 10)} ${from.slice(11, 16)} UTC`);
    expect(said).not.toContain("tomorrow");
    expect(said).not.toContain('id="new-key"');
    const churned = () => readKeyFile(keysPath(data)).keys.filter((k) => k.account === "churn");
    expect(churned()).toHaveLength(KEYS_A_DAY);
    // A key the operator made with the key tool counts too, as the message says.
    updateKeyFile(data, (f) => {
      f.keys.find((k) => k.account === "churn")!.created_at = new Date(Date.now() - 86_400_000 - 1_000).toISOString();
      const made = addKey(f, { name: "Operator's", account: "churn", scope: "read", now: Date.now() });
      made.record.revoked_at = new Date().toISOString();
    });
    expect((await create("One more")).status).toBe(409);
    // A day later the operator's no longer counts either: one more may be made.
    updateKeyFile(data, (f) => {
      f.keys.find((k) => k.name === "Operator's")!.created_at = new Date(Date.now() - 86_400_000 - 1_000).toISOString();
    });
    expect((await create("One more")).status).toBe(201);
    expect(churned()).toHaveLength(KEYS_A_DAY + 2);
  });

  test("a key made while the server's disk is full: no key shown, the holder told nothing was changed (not a 500), the store as it was", async () => {
    const cookie = await sessionCookie(token);
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const stored = readFileSync(join(data, "keys.json"), "utf8");
    const said = spyOn(console, "error").mockImplementation(() => {});
    const full = spyOn(fs, "writeSync").mockImplementation(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    let created: Response;
    let logged: string[];
    try {
      created = await handle("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, name: "Full disk", scope: "read" }),
      });
    } finally {
      full.mockRestore();
      logged = said.mock.calls.map((c) => String(c[0]));
      said.mockRestore();
    }
    const page = await created.text();
    expect(created.status).toBe(503);
    expect(page).toContain("nothing was changed");
    expect(page).not.toContain("wk_");
    expect(page).not.toContain(data);
    expect(logged).toEqual([
      `dashboard: could not write ${join(data, "keys.json")}.lock: ENOSPC: no space left on device, write; no key or plan was changed.`,
    ]);
    expect(readFileSync(join(data, "keys.json"), "utf8")).toBe(stored);
  });

  /**
   * A key created by a new account's holder while keys.json's lock is held by a live process (this one, as a key
   * command stopped with Ctrl-Z would): resolves once the server found the lock held, with the lock's path and the
   * create's response to come; `late` moves the clock by as much once the lock was first read.
   */
  async function createWhileLocked(name: string, late = 0) {
    const holder = updateKeyFile(data, (f) => createAccountAccess(f, name, "free").token);
    const cookie = await sessionCookie(holder);
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const lock = `${keysPath(data)}.lock`;
    writeFileSync(lock, lockText());
    // Every lock is read through lockFiles.read (an fd's read, f33ffcb): the wait for it is seen there.
    const read = lockFiles.read;
    const clock = Date.now;
    let moved = 0;
    let found!: () => void;
    const held = new Promise<void>((resolve) => (found = resolve));
    const reads = spyOn(lockFiles, "read").mockImplementation((path) => {
      if (path === lock) {
        moved = late;
        found();
      }
      return read(path);
    });
    const now = spyOn(Date, "now").mockImplementation(() => clock() + moved);
    const response = Promise.resolve(
      handle("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, name: "While locked", scope: "read" }),
      }),
    ).finally(() => {
      reads.mockRestore();
      now.mockRestore();
    });
    await held;
    return { lock, response };
  }

  test("a key created while a stopped key command holds keys.json's lock: the server answers other requests meanwhile, and creates the key once the lock is let go", async () => {
    const { lock, response } = await createWhileLocked("held");
    let settled = false;
    void response.finally(() => (settled = true));
    try {
      expect((await handle("/healthz")).status).toBe(200);
      // On the code before, the server's thread slept waiting for the lock: /healthz was answered only after the
      // create gave up (10 s) and was refused (409), the lock still held.
      expect(settled).toBe(false);
    } finally {
      rmSync(lock, { force: true });
    }
    const created = await response;
    expect(created.status).toBe(201);
    expect(await created.text()).toContain('id="new-key"');
  });

  test("a key created while keys.json's lock stays held past the wait: 503, try again shortly, no key made; the lock and the data folder are the operator's (logged), not shown to the account holder", async () => {
    const { lock, response } = await createWhileLocked("held-long", 10_001);
    let refused: Response;
    try {
      refused = await response;
    } finally {
      rmSync(lock, { force: true });
    }
    expect(refused.status).toBe(503);
    const page = await refused.text();
    expect(page).toContain("Try again in a moment.");
    expect(page).not.toContain(data);
    expect(readKeyFile(keysPath(data)).keys.filter((k) => k.account === "held-long")).toEqual([]);
  });

  test("a page's address with a slash at its end is sent to the page's own (308, the query kept); other addresses are still 404", async () => {
    const location = async (path: string, init: RequestInit = {}) => {
      const r = await handle(path, init);
      return [r.status, r.headers.get("location"), await r.text()];
    };
    expect(await location("/dashboard/")).toEqual([308, "/dashboard", ""]);
    expect(await location("/dashboard//")).toEqual([308, "/dashboard", ""]);
    expect(await location("/dashboard/", { method: "HEAD" })).toEqual([308, "/dashboard", ""]);
    expect(await location("/dashboard/sign-in/?signed-out")).toEqual([308, "/dashboard/sign-in?signed-out", ""]);
    // Followed, each is its page: signed out, the dashboard sends to the sign-in form, which answers.
    expect(await location("/dashboard")).toEqual([303, "/dashboard/sign-in", ""]);
    expect((await handle("/dashboard/sign-in?signed-out")).status).toBe(200);
    const cookie = await sessionCookie(token);
    expect((await handle("/dashboard/", { headers: { cookie } })).headers.get("location")).toBe("/dashboard");
    expect((await handle("/dashboard", { headers: { cookie } })).status).toBe(200);
    // A form posted to its address with a slash keeps its method and body through a 308.
    expect(await location("/dashboard/sign-out/", { method: "POST", headers: { origin: "http://localhost" } })).toEqual(
      [308, "/dashboard/sign-out", ""],
    );
    // No page of that address for the method, or none at all: 404 as before.
    for (const path of ["/dashboard/sign-out/", "/dashboard/nope/", `/dashboard/${"/".repeat(50_000)}x/`])
      expect([path.slice(0, 20), (await handle(path)).status]).toEqual([path.slice(0, 20), 404]);
  });

  test("a key named with control characters or direction marks is refused (400), none made: the operator reads names in a terminal", async () => {
    const cookie = await sessionCookie(token);
    const page = await (await handle("/dashboard", { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const before = (page.match(/<tr/g) ?? []).length;
    for (const name of ["evil\u001b[2J", "two\nlines", "\u202eevil"]) {
      const r = await handle("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, name, scope: "read" }),
      });
      const text = await r.text();
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      expect(text).toContain("may not hold control characters");
      expect(text).not.toContain('id="new-key"');
    }
    const after = await (await handle("/dashboard", { headers: { cookie } })).text();
    expect((after.match(/<tr/g) ?? []).length).toBe(before);
  });

  test("a key's name is bounded in characters, not UTF-16 units: 100 emoji and CJK Extension B ideographs (200 units) make a key, 101 are refused", async () => {
    const cookie = await sessionCookie(updateKeyFile(data, (f) => createAccountAccess(f, "astral", "growth").token));
    const csrf = csrfOf(await (await handle("/dashboard", { headers: { cookie } })).text());
    const create = (name: string) =>
      handle("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, name, scope: "read" }),
      });
    const astral = "𠮷📚".repeat(50);
    const made = await create(astral);
    expect([made.status, await made.text()]).toEqual([
      201,
      expect.stringContaining(`Your new key “<bdi>${astral}</bdi>”`),
    ]);
    const over = await create(`${astral}📚`);
    expect([over.status, await over.text()]).toEqual([
      400,
      expect.stringContaining("Give the key a name of 1 to 100 characters."),
    ]);
  });
});

// An app of its own: the tests above spend the one app's dashboard requests of an address (100 in 10 s, visit.ts), the
// lock tests with the clock moved 10 s ahead, so a sign-in here was refused (429).
describe("in process (app.handle), a second app", () => {
  let app: App;
  let token: string;
  let data: string;

  beforeAll(async () => {
    data = tempDir("tome-dash-app-");
    token = updateKeyFile(data, (f) => createAccountAccess(f, "acme", "free").token);
    app = await appWithAccounts(data, { dumps: [EN_2016] }, { adminToken: ADMIN_TOKEN });
  });
  afterAll(() => app?.close());

  const { handle, sessionCookie } = inProcess(() => app);

  test("a refusal's page shown while signed in has Sign out, as every other page has: a page that is not there (404), a key that is not the account's (404), the wrong method (405)", async () => {
    const cookie = await sessionCookie(token);
    const operator = await sessionCookie(ADMIN_TOKEN);
    const signOut = `<form method="post" action="/dashboard/sign-out">`;
    for (const [path, init, status, who] of [
      ["/dashboard/nope", { headers: { cookie } }, 404, "Account acme"],
      ["/dashboard/keys/key_missing/revoke", { headers: { cookie } }, 404, "Account acme"],
      ["/dashboard/sign-in", { method: "PUT", headers: { cookie } }, 405, "Account acme"],
      ["/dashboard/nope", { headers: { cookie: operator } }, 404, "Operator"],
    ] as const) {
      const r = await handle(path, init);
      const text = await r.text();
      expect({ path, status: r.status, signOut: text.includes(signOut), who: text.includes(`>${who}</span>`) }).toEqual(
        {
          path,
          status,
          signOut: true,
          who: true,
        },
      );
    }
    // Signed out (no cookie, or one no session has), the same pages offer no Sign out.
    for (const headers of [{}, { cookie: "tome_session=gone" }] as Record<string, string>[]) {
      const text = await (await handle("/dashboard/nope", { headers })).text();
      expect(text).not.toContain(signOut);
    }
  });

  test("a HEAD is answered with the headers of its GET, the length included (it was 0), and no body", async () => {
    const cookie = await sessionCookie(token);
    for (const path of ["/dashboard/sign-in", "/dashboard", "/dashboard/dashboard.css", "/dashboard/nope"]) {
      const get = await handle(path, { headers: { cookie } });
      const length = (await get.arrayBuffer()).byteLength;
      const head = await handle(path, { method: "HEAD", headers: { cookie } });
      expect({
        path,
        status: head.status,
        length: head.headers.get("content-length"),
        body: await head.text(),
      }).toEqual({
        path,
        status: get.status,
        length: String(length),
        body: "",
      });
      expect(length).toBeGreaterThan(0);
    }
  });

  test("another site's sign-out form is refused (403) and clears no cookie: SameSite keeps the session cookie from it, not the answer's", async () => {
    const cookie = await sessionCookie(token);
    const signOut = (headers: Record<string, string>) =>
      handle("/dashboard/sign-out", { method: "POST", headers: { "content-type": FORM, ...headers }, body: "" });
    const foreign = await signOut({ origin: "http://evil.example" });
    expect([foreign.status, foreign.headers.getSetCookie()]).toEqual([403, []]);
    expect((await handle("/dashboard", { headers: { cookie } })).status).toBe(200);
    // From this site, a session already ended is still cleared.
    const own = await signOut({ origin: "http://localhost" });
    expect([own.status, own.headers.get("location")]).toEqual([303, "/dashboard/sign-in?signed-out"]);
    expect(own.headers.getSetCookie()).toEqual([expect.stringMatching(/^tome_session=; .*Max-Age=0/)]);
  });
});

test("TOME_PUBLIC_URL must be an http(s) URL: start says so and stops", async () => {
  // start's main in this process (startTool): the settings are read, and refused, before anything is opened.
  const r = await startTool({ TOME_PUBLIC_URL: "tome.example.com", TOME_DATA: tempDir("tome-dash-") });
  expect([r.code, r.stderr.trim()]).toEqual([
    2,
    'start: TOME_PUBLIC_URL must be where clients reach the server, as http(s)://HOST[:PORT], not "tome.example.com".',
  ]);
});

test('the usage chart\'s day labels stand apart on a phone: the 30th and the 31st, a day apart, were drawn over each other ("3031" at 375 px)', () => {
  // The chart is drawn 720 units wide and shrunk to the screen; on a phone its labels are 24 units high (dashboard.css),
  // so two digits take about 27: labels' centres closer than two such widths meet.
  const PHONE_LABELS_APART = 48;
  const gaps: Record<number, number> = {};
  for (const length of [28, 29, 30, 31]) {
    const days = Array.from({ length }, (_, i) => ({ day: i + 1, requests: 0, credits: 0 }));
    const svg = usageChart(days, 1, "December").text;
    const ticks = [...svg.matchAll(/<text class="axis" x="([\d.]+)" y="\d+" text-anchor="middle">(\d+)</g)];
    expect(ticks.map((t) => Number(t[2]))).toContain(length); // the month's last day is labelled
    const xs = ticks.map((t) => Number(t[1]));
    gaps[length] = Math.min(...xs.slice(1).map((x, i) => x - xs[i]!));
  }
  expect(Object.entries(gaps).filter(([, gap]) => gap < PHONE_LABELS_APART)).toEqual([]);
});

test("no page loaded anything from another origin", () => {
  expect(requested.length).toBeGreaterThan(20);
  // A new tab's own about:blank is not a request, nor are the data: images of Chromium's own date
  // field (its calendar icon): the pages' CSP (img-src 'self') would refuse any of theirs.
  const elsewhere = requested.filter(
    (url) =>
      url !== "about:blank" &&
      !url.startsWith("data:image/svg+xml") &&
      !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\]):\d+\//.test(url),
  );
  expect(elsewhere).toEqual([]);
});
