import type { PlanMember, PlanUsage, VendOutcome } from "./journal.js";
import type { Statements } from "./statements.js";

/** A plan session's member row, with the vend price (what a counted vend adds). */
type PlanRow = PlanMember & { price: number };

/**
 * Counts a plan session's vend against its member's day and month usage, inside the caller's transaction.
 * A plan vend counts when delivered, or when its outcome is unknown (err against over-granting).
 */
export function countPlanVend(stmts: Statements, sessionId: string, outcome: VendOutcome): void {
  const plan = stmts.planOf.get(sessionId) as PlanRow | undefined;
  if (plan !== undefined && (outcome === "success" || outcome === "unknown")) {
    for (const period of [plan.day, plan.month])
      stmts.planCount.run({ memberId: plan.memberId, period, amount: plan.price });
  }
}

/** The plan member a session was opened for, if any. */
export function planMemberOf(stmts: Statements, sessionId: string): PlanMember | undefined {
  const row = stmts.planOf.get(sessionId) as PlanRow | undefined;
  if (row === undefined) return undefined;
  const { price: _price, ...member } = row;
  return member;
}

/** A member's counted usage in one period (day or month key); zero when nothing was counted. */
export function planUsageOf(stmts: Statements, memberId: string, period: string): PlanUsage {
  const row = stmts.planUsage.get(memberId, period) as PlanUsage | undefined;
  return row === undefined ? { items: 0, amount: 0 } : { items: row.items, amount: row.amount };
}
