/**
 * The operator's actions (D69): the accounts, ACCOUNTS_PER_PAGE at a time in order of their names
 * (each with its keys read: bounded, and charged to the operator's work share, D81, D82), a
 * plan changed (then 303 back to the page, which says so), and a sign-in token issued to an
 * account, new or not (shown once, on the page that answers).
 */
import {
  accountNameProblem,
  createAccountAccess,
  isPlan,
  KeyStoreError,
  monthOf,
  PLAN_NAMES,
  keysHeld,
  replaceAccountToken,
  setPlan,
} from "../../access";
import { DASHBOARD_PATH } from "./cookies";
import { readForm } from "./forms";
import { ACCOUNTS_PER_PAGE, adminPage } from "./operator-page";
import { redirect, respond } from "./respond";
import { accountSummaries, monthNameOf } from "./views";
import type { Visit } from "./visit";

type PageExtra = Pick<Parameters<typeof adminPage>[0], "notice" | "error" | "issued" | "form">;

const PLAN_CHANGED = "plan";

/** The page of accounts after `after` ("" for the first), with what the request adds. */
async function accountsPage(v: Visit, after: string, extra: PageExtra = {}): Promise<string> {
  const { accounts, more } = await v.store.accountsAfter(after, ACCOUNTS_PER_PAGE);
  const names = accounts.map(([name]) => name);
  // One time for the month named and the credits read: the month the API charges (D20), not the clock's.
  const t = v.site.usageTime(v.now);
  const month = monthOf(t);
  const [keys, spent] = await Promise.all([
    Promise.all(names.map((n) => v.store.keysOf(n))),
    v.store.spent(month, names),
  ]);
  const rows = accounts.map(([name, account], i) => ({ name, account, keys: keys[i]! }));
  return adminPage({
    csrf: v.signedIn!.session.csrf,
    accounts: accountSummaries(rows, spent, v.now),
    plans: PLAN_NAMES,
    monthName: monthNameOf(t),
    next: more ? names.at(-1) : undefined,
    later: after !== "",
    ...extra,
  });
}

export async function showAccounts(v: Visit): Promise<Response> {
  const query = new URL(v.request.url).searchParams;
  const changed = query.get(PLAN_CHANGED);
  const account = changed && !accountNameProblem(changed) ? await v.store.account(changed) : undefined;
  let notice: string | undefined;
  if (account) {
    // A smaller plan keeps the keys held (D21 refuses only a key made past its number): said, as keys plan says it.
    const { active, limit } = keysHeld(await v.store.keysOf(changed!), changed!, account, v.now);
    notice =
      `Account ${changed} is now on the ${account.plan} plan.` +
      (active > limit
        ? ` It holds ${active} active keys, more than the ${limit} the plan allows: they keep working, but no key can be made for it until fewer than ${limit} are active.`
        : "");
  }
  return respond(v, 200, await accountsPage(v, query.get("after") ?? "", { notice }));
}

/** Gives an account the dashboard: makes it if it is new, and issues its sign-in token (replacing any). */
export async function issueToken(v: Visit): Promise<Response> {
  const form = await readForm(v, v.signedIn!.session.csrf);
  const name = (form.get("account") ?? "").trim();
  const plan = form.get("plan") ?? "free";
  const refuse = async (error: string) =>
    respond(v, 400, await accountsPage(v, "", { error, form: { account: name, plan } }));
  const wrong = accountNameProblem(name);
  if (wrong) return refuse(`An account's name ${wrong}.`);
  if (!isPlan(plan)) return refuse(`The plan must be one of ${PLAN_NAMES.join(", ")}.`);
  const issued = await v.store.update(name, (f) =>
    f.accounts[name] ? replaceAccountToken(f, name) : createAccountAccess(f, name, plan),
  );
  return respond(v, 201, await accountsPage(v, "", { issued: { account: name, token: issued.token } }));
}

export async function changePlan(v: Visit): Promise<Response> {
  const form = await readForm(v, v.signedIn!.session.csrf);
  const name = v.params.name!;
  const plan = form.get("plan") ?? "";
  if (!isPlan(plan))
    return respond(v, 400, await accountsPage(v, "", { error: `The plan must be one of ${PLAN_NAMES.join(", ")}.` }));
  try {
    await v.store.update(name, (f) => setPlan(f, name, plan));
  } catch (err) {
    if (err instanceof KeyStoreError) return respond(v, 404, await accountsPage(v, "", { error: err.message }));
    throw err;
  }
  return redirect(v, `${DASHBOARD_PATH}?${PLAN_CHANGED}=${encodeURIComponent(name)}`);
}
