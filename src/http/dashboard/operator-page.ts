/** The operator's page: every account (a page at a time), plan changes, and sign-in tokens issued. */
import type { PlanName } from "../../access";
import { alert, csrfField, number, page, secretField } from "./frame";
import { html } from "./html";

/** Accounts shown a page: each is one lookup of its keys (D81). */
export const ACCOUNTS_PER_PAGE = 50;

export interface AccountSummary {
  name: string;
  plan: PlanName;
  activeKeys: number;
  spent: number;
  quota: number;
  dashboard: boolean;
}

export function adminPage(o: {
  csrf: string;
  accounts: AccountSummary[];
  plans: readonly PlanName[];
  monthName: string;
  notice?: string;
  error?: string;
  issued?: { account: string; token: string };
  /** What the issue form held when it was refused: given back, not typed again. */
  form?: { account: string; plan: string };
  /** The name the next page of accounts starts after, if more follow; whether this is a later page. */
  next?: string;
  later?: boolean;
}): string {
  const planOptions = (selected: string | undefined) =>
    o.plans.map((p) => html`<option value="${p}" ${p === selected ? html`selected` : ""}>${p}</option>`);
  const rows = o.accounts.map(
    (a) => html`<tr>
<td data-label="Account"><strong>${a.name}</strong></td>
<td data-label="Plan"><span class="badge plan">${a.plan}</span></td>
<td data-label="Active keys" class="num">${a.activeKeys}</td>
<td data-label="Credits ${o.monthName}" class="num">${number(a.spent)} / ${number(a.quota)}</td>
<td data-label="Dashboard">${a.dashboard ? "Yes" : "No"}</td>
<td class="actions"><form method="post" action="/dashboard/accounts/${a.name}/plan" class="inline">${csrfField(o.csrf)}<label class="visually-hidden" for="plan-${a.name}">Plan of ${a.name}</label><select id="plan-${a.name}" name="plan">${planOptions(a.plan)}</select><button class="button small" type="submit">Change plan</button></form></td>
</tr>`,
  );
  return page({
    title: "Operator",
    who: { label: "Operator", csrf: o.csrf },
    body: html`<div class="page-head"><h1>Accounts</h1><span class="badge plan">operator</span></div>
${alert("notice", o.notice)}${alert("error", o.error)}
${
  o.issued &&
  html`<section class="card created" aria-labelledby="issued-title" tabindex="-1" id="created">
<h2 id="issued-title">Sign-in token for ${o.issued.account}</h2>
<p>Give it to the account holder privately: it is shown only this once.</p>
${secretField(o.issued.token, "The new sign-in token")}
</section>`
}
<section class="card" aria-labelledby="accounts-title">
<h2 id="accounts-title">Every account</h2>
<p class="help">In order of their names, ${ACCOUNTS_PER_PAGE} a page.</p>
${
  o.accounts.length
    ? html`<div class="table-wrap"><table class="keys"><thead><tr><th scope="col">Account</th><th scope="col">Plan</th><th scope="col" class="num">Active keys</th><th scope="col" class="num">Credits ${o.monthName}</th><th scope="col">Dashboard</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<div class="empty"><p class="empty-title">No accounts yet</p><p>Give someone access below.</p></div>`
}
${
  (o.next !== undefined || o.later) &&
  html`<nav class="row" aria-label="Pages of accounts">${o.later ? html`<a class="button quiet" href="/dashboard">First page</a>` : ""}${o.next !== undefined ? html`<a class="button" href="/dashboard?after=${encodeURIComponent(o.next)}">Next accounts</a>` : ""}</nav>`
}
</section>
<section class="card" aria-labelledby="access-title">
<h2 id="access-title">Give an account the dashboard</h2>
<p class="help">Makes the account if it is new and shows its holder's sign-in token once. An account that has a token gets a new one: the old one stops working.</p>
<form method="post" action="/dashboard/accounts" class="create">
${csrfField(o.csrf)}
<div class="field"><label for="account">Account</label><input id="account" name="account" required maxlength="64" pattern="[A-Za-z0-9._\\-]{1,64}" aria-describedby="account-help" value="${o.form?.account ?? ""}"><p id="account-help" class="help">Letters, digits, “.”, “_” or “-”.</p></div>
<div class="field"><label for="new-plan">Plan (a new account's)</label><select id="new-plan" name="plan">${planOptions(o.form?.plan ?? "free")}</select></div>
<div class="field submit"><button class="button primary" type="submit">Issue sign-in token</button></div>
</form>
</section>`,
  });
}
