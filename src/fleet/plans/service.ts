/**
 * Plans on the fleet (issue 18): plans, members, sign-up, the service's callbacks, monthly charges with a
 * grace period, overage billed as a one-off payment, refunds, and the scheduler step `runPlanCycle`.
 * Everything takes the instant from the caller or `ctx.clock`: nothing waits on real time.
 *
 * The entry of the plans flows; each lives in its own module:
 * - common.ts: settings, `PlansError`, periods, card UIDs and badge hashes
 * - agreements.ts: plans, sign-up, agreement callbacks, ending a membership
 * - charges.ts: monthly charges, grace and suspension
 * - overage.ts: usage against the allowances, overage one-offs and their capture
 * - refunds.ts: refund requests and refund callbacks
 * - callbacks.ts: callback authorisation, replay refusal, payment callbacks
 * - members.ts: company members
 * - cycle.ts: the scheduler step `runPlanCycle`
 * Their queries are in store/ (one file per table or flow); the flows hold no SQL.
 */
export {
  applyAgreementCallback,
  createPlan,
  editPlan,
  endMembership,
  PlanInput,
  SignUpInput,
  signUp,
} from "./agreements.js";
export { applyPaymentCallbacks, callbackAuthorised, firstSighting } from "./callbacks.js";
export {
  hashBadge,
  nextPeriod,
  normaliseUid,
  PlansError,
  type PlansSettings,
  periodOf,
  previousPeriod,
} from "./common.js";
export { type CycleReport, runPlanCycle } from "./cycle.js";
export { addCompanyMember } from "./members.js";
export { type Usage, usageOf } from "./overage.js";
export { applyRefundCallback, REFUND_WINDOW_MS, requestRefund } from "./refunds.js";
