/**
 * An account holder's pages: their keys with this month's use, plan and usage by day, the form
 * that creates a key, and a revocation's confirmation. A key's text appears only on the page
 * that answers its creation.
 */
import { KEY_NAME_MAX, shownPrefix, type KeyState, type Plan, type PlanName, type Scope } from "../../access";
import { usageChart, type DayUse } from "./chart";
import { alert, csrfField, number, page, secretField } from "./frame";
import { html, type Html } from "./html";

/**
 * Keys an account's page lists (D82): the search route's largest limit. All of them on one page made an account of
 * 10,000 keys a page of 6 MB; the others are a link away (?offset=, as the API's lists page).
 */
export const KEYS_PER_PAGE = 50;

export interface KeyRow {
  id: string;
  name: string;
  /** The key's first characters (wk_ and four), or "" for a key made before they were kept. */
  prefix: string;
  scope: Scope;
  created: string;
  expires: string | null;
  lastUsed: string | null;
  state: KeyState;
  requests: number;
  credits: number;
}

export interface AccountView {
  account: string;
  plan: PlanName;
  limits: Plan;
  activeKeys: number;
  /** The page's keys: the account's from the offset'th (0 first), at most KEYS_PER_PAGE. */
  keys: KeyRow[];
  offset: number;
  /** Keys the account holds, revoked and expired ones included. */
  total: number;
  /** Credits spent this month by the account. */
  spent: number;
  days: DayUse[];
  today: number;
  monthName: string;
  /** When the quota starts again (ISO). */
  reset: string;
  csrf: string;
  /** The create form's own random id: sent again, the form makes no second key (D157). */
  formId: string;
  /** The key just made: its text, shown this once. */
  created?: { key: string; name: string };
  /** Html where it names a key (its name isolated in <bdi>, as a right-to-left name would reorder the sentence). */
  notice?: string | Html;
  error?: string;
  /** What the create form held when it was refused. */
  form?: { name: string; scope: string; expires: string };
  /** The earliest expiry a key may be given (tomorrow, UTC), YYYY-MM-DD. */
  firstExpiry: string;
}

const day = (iso: string | null, none: string) => (iso ? iso.slice(0, 10) : none);
const when = (iso: string | null, none: string) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : none);

/** The links to the pages of keys around this one, and which keys it shows; none when every key is on it. */
function keyPages(v: AccountView): Html | "" {
  if (v.offset === 0 && v.total <= KEYS_PER_PAGE) return "";
  const to = (offset: number) => (offset === 0 ? "/dashboard" : `/dashboard?offset=${offset}`);
  const shown = v.keys.length
    ? `Keys ${number(v.offset + 1)} to ${number(v.offset + v.keys.length)} of ${number(v.total)}.`
    : `No keys here: your account has ${number(v.total)}, and this page starts past them.`;
  const next = v.offset + KEYS_PER_PAGE < v.total ? v.offset + KEYS_PER_PAGE : undefined;
  const previous = v.offset > 0 && v.keys.length ? Math.max(0, v.offset - KEYS_PER_PAGE) : undefined;
  return html`<nav class="row" aria-label="Pages of keys"><p class="help">${shown}</p>${v.offset > 0 ? html`<a class="button quiet" href="/dashboard">First page</a>` : ""}${previous !== undefined && previous > 0 ? html`<a class="button quiet" href="${to(previous)}">Previous keys</a>` : ""}${next !== undefined ? html`<a class="button" href="${to(next)}">Next keys</a>` : ""}</nav>`;
}

function keyTable(v: AccountView): Html {
  if (!v.keys.length) {
    if (v.total) return html`${keyPages(v)}`;
    return html`<div class="empty"><p class="empty-title">No keys yet</p><p>Create your first key below, then send it with each request as <code>X-API-Key</code>.</p></div>`;
  }
  const rows = v.keys.map(
    (k) => html`<tr>
<td data-label="Name"><span class="key-name">${k.name}</span></td>
<td data-label="Key"><code class="prefix">${shownPrefix(k.prefix)}</code></td>
<td data-label="Scope">${k.scope === "full" ? "Full" : "Read"}</td>
<td data-label="Created">${day(k.created, "—")}</td>
<td data-label="Expires">${day(k.expires, "Never")}</td>
<td data-label="Last used">${when(k.lastUsed, "Never")}</td>
<td data-label="State"><span class="badge ${k.state}">${k.state[0]!.toUpperCase() + k.state.slice(1)}</span></td>
<td data-label="Requests" class="num">${number(k.requests)}</td>
<td data-label="Credits" class="num">${number(k.credits)}</td>
<td class="actions">${k.state === "active" ? html`<a class="button danger small" href="/dashboard/keys/${k.id}/revoke">Revoke<span class="visually-hidden"> ${k.name}</span></a>` : ""}</td>
</tr>`,
  );
  return html`<div class="table-wrap"><table class="keys key-list">
<caption class="visually-hidden">Your API keys, with their use this month</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scope</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col" class="num">Requests<span class="visually-hidden"> this month</span></th><th scope="col" class="num">Credits<span class="visually-hidden"> this month</span></th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody>
</table></div>${keyPages(v)}`;
}

function createForm(v: AccountView): Html {
  const full = v.activeKeys >= v.limits.keys;
  const f = v.form ?? { name: "", scope: "read", expires: "" };
  const reason = `Your ${v.plan} plan allows ${number(v.limits.keys)} active keys, and you have ${v.activeKeys}. Revoke a key to create another, or ask your operator for a larger plan.`;
  return html`<section class="card" aria-labelledby="create-title">
<h2 id="create-title">Create a key</h2>
${full ? html`<p class="alert warn" role="status">${reason}</p>` : ""}
<form method="post" action="/dashboard/keys" class="create">
${csrfField(v.csrf)}<input type="hidden" name="form" value="${v.formId}">
<div class="field"><label for="name">Name</label><input id="name" name="name" required pattern="[\\s\\S]{1,${KEY_NAME_MAX}}" title="1 to ${KEY_NAME_MAX} characters" value="${f.name}" placeholder="e.g. Production server" ${full ? html`disabled` : ""}></div>
<fieldset class="field"><legend>Scope</legend>
<label class="choice"><input type="radio" name="scope" value="read" ${f.scope !== "full" ? html`checked` : ""} ${full ? html`disabled` : ""}> <span><strong>Read</strong> — search, pages and chunks</span></label>
<label class="choice"><input type="radio" name="scope" value="full" ${f.scope === "full" ? html`checked` : ""} ${full ? html`disabled` : ""}> <span><strong>Full</strong> — also renders PDFs</span></label>
</fieldset>
<div class="field"><label for="expires">Expires <span class="optional">(optional)</span></label><input id="expires" name="expires" type="date" min="${v.firstExpiry}" value="${f.expires}" aria-describedby="expires-help" ${full ? html`disabled` : ""}><p id="expires-help" class="help">The key stops working at 00:00 UTC on this day. Leave empty for a key that does not expire.</p></div>
<div class="field submit"><button class="button primary" type="submit" ${full ? html`disabled` : ""}>Create key</button></div>
</form>
</section>`;
}

function createdCallout(created: { key: string; name: string }): Html {
  return html`<section class="card created" aria-labelledby="created-title" tabindex="-1" id="created">
<h2 id="created-title">Your new key “<bdi>${created.name}</bdi>”</h2>
<p>Copy it now: this is the only time it is shown. Only its fingerprint is kept, so it cannot be shown again.</p>
${secretField(created.key, "The new API key")}
<p class="help">Send it with each request: <code>curl -H "X-API-Key: ${created.key.slice(0, 7)}…" …/v1/search?q=…</code></p>
</section>`;
}

export function accountPage(v: AccountView): string {
  const quota = v.limits.quota;
  const share = Number.isFinite(quota) ? Math.min(1, v.spent / quota) : 0;
  const usageTable = v.days
    .filter((d) => d.day <= v.today)
    .map(
      (d) =>
        html`<tr><th scope="row">${v.monthName} ${d.day}</th><td class="num">${number(d.requests)}</td><td class="num">${number(d.credits)}</td></tr>`,
    );
  return page({
    title: `Account ${v.account}`,
    who: { label: `Account ${v.account}`, csrf: v.csrf },
    body: html`<div class="page-head"><h1>${v.account}</h1><span class="badge plan">${v.plan} plan</span></div>
${alert("notice", v.notice)}${alert("error", v.error)}
${v.created ? createdCallout(v.created) : ""}
<div class="grid">
<section class="card" aria-labelledby="plan-title">
<h2 id="plan-title">Plan and usage</h2>
<p class="big"><span class="big-num">${number(v.spent)}</span> <span class="big-of">of ${Number.isFinite(quota) ? `${number(quota)} credits` : "unlimited credits"} this month</span></p>
${Number.isFinite(quota) ? html`<div class="meter" aria-hidden="true"><svg viewBox="0 0 100 8" preserveAspectRatio="none"><rect class="meter-track" width="100" height="8" rx="4"/><rect class="meter-fill${share >= 0.9 ? " hot" : ""}" width="${(share * 100).toFixed(2)}" height="8" rx="4"/></svg></div>` : ""}
<p class="help">The quota starts again on ${v.reset.slice(0, 10)} at 00:00 UTC. A request costs 1 credit, a PDF 10.</p>
<dl class="limits">
<div><dt>Requests per second, per key</dt><dd>${number(v.limits.rate)}</dd></div>
<div><dt>Credits per month</dt><dd>${number(quota)}</dd></div>
<div><dt>Active keys</dt><dd>${v.activeKeys} of ${number(v.limits.keys)}</dd></div>
</dl>
</section>
<section class="card" aria-labelledby="chart-head">
<h2 id="chart-head">Usage by day</h2>
${usageChart(v.days, v.today, v.monthName)}
<details><summary>Usage by day as a table</summary><table class="days"><thead><tr><th scope="col">Day</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Credits</th></tr></thead><tbody>${usageTable}</tbody></table></details>
</section>
</div>
<section class="card" aria-labelledby="keys-title">
<div class="card-head"><h2 id="keys-title">API keys</h2><p class="help">Requests and credits are this month's (UTC).</p></div>
${keyTable(v)}
</section>
${createForm(v)}`,
  });
}

export function revokePage(o: { account: string; csrf: string; key: KeyRow }): string {
  return page({
    title: `Revoke ${o.key.name}`,
    who: { label: `Account ${o.account}`, csrf: o.csrf },
    body: html`<section class="card narrow">
<h1>Revoke “<bdi>${o.key.name}</bdi>”?</h1>
<p>The key <code>${o.key.prefix ? `${o.key.prefix}…` : o.key.id}</code> (scope ${o.key.scope}) stops working at once: every request made with it is refused with 403, on every server. This cannot be undone.</p>
<form method="post" action="/dashboard/keys/${o.key.id}/revoke" class="row">
${csrfField(o.csrf)}
<button class="button danger" type="submit">Revoke key</button>
<a class="button quiet" href="/dashboard">Cancel</a>
</form>
</section>`,
  });
}
