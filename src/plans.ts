/**
 * api.md section 8 and D19–D21: what each plan allows. A leaf module, below access, which enforces them: the key tool
 * states them in its commands' --help without loading the access layer (test/layers.test.ts: what a command loads).
 */
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
