/** api.md section 8 and D19–D21: what each plan allows. */
export const PLAN_NAMES = ["free", "starter", "growth", "business", "enterprise"] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  /** Requests per second per key (D19). For enterprise, the account's own rate. */
  rate: number;
  /** Credits per UTC month per account (D20); Infinity = unlimited. */
  quota: number;
  /** Keys an account may hold (D21); Infinity = unlimited. */
  keys: number;
}

/** Enterprise's rate when its account has none set (`bun run keys plan --rate N`). */
export const ENTERPRISE_DEFAULT_RATE = 1000;

export const PLANS: Record<PlanName, Plan> = {
  free: { rate: 10, quota: 5_000, keys: 3 },
  starter: { rate: 25, quota: 50_000, keys: 5 },
  growth: { rate: 50, quota: 250_000, keys: 10 },
  business: { rate: 100, quota: 1_000_000, keys: 20 },
  enterprise: { rate: ENTERPRISE_DEFAULT_RATE, quota: Infinity, keys: Infinity },
};

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
