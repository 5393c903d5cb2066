/** What each plan allows (api.md section 8, D19–D21): ../plans.ts, a leaf the key tool's --help reads without this layer. */
import { PLAN_NAMES, PLANS, type Plan, type PlanName } from "../plans";

export { ENTERPRISE_DEFAULT_RATE, PLAN_NAMES, PLANS, type Plan, type PlanName } from "../plans";

export function isPlan(name: string): name is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(name);
}

/** The limits of an account: its plan's, with enterprise's rate set per account. */
export function limitsOf(plan: PlanName, rate?: number): Plan {
  const base = PLANS[plan];
  return plan === "enterprise" && rate !== undefined ? { ...base, rate } : base;
}

/** A count per plan, every plan from 0 (credits spent, work charged: for /metrics). */
export class PlanTally {
  private readonly counts = new Map<PlanName, number>(PLAN_NAMES.map((plan) => [plan, 0]));

  add(plan: PlanName, n: number): void {
    this.counts.set(plan, this.counts.get(plan)! + n);
  }

  get all(): ReadonlyMap<PlanName, number> {
    return this.counts;
  }
}
