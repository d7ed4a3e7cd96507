/**
 * Plans, sign-up and agreements: a plan is created, a member signs up (pending, with an agreement whose
 * landing page the QR code shows), the agreement callback activates or ends the member, and the dashboard
 * ends a membership by cancelling its agreement.
 */
import * as z from "zod";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import {
  activePlan,
  assertCardFree,
  hashBadge,
  newId,
  PlansError,
  type PlansSettings,
  setStatus,
} from "./common.js";
import {
  deleteMember,
  insertMember,
  insertPlan,
  memberById,
  setAgreement,
  updatePlan,
} from "./store/members.js";
import { planById } from "./store/plans.js";

// ---- plans ------------------------------------------------------------------------------------------------

export const PlanInput = z.strictObject({
  name: z.string().trim().min(1).max(30),
  price: z.number().int().nonnegative().max(6_000_000),
  currency: z.enum(["DKK", "EUR"]),
  dayItems: z.number().int().nonnegative().nullable(),
  dayAmount: z.number().int().nonnegative().nullable(),
  monthItems: z.number().int().nonnegative().nullable(),
  monthAmount: z.number().int().nonnegative().nullable(),
  /** Unit ids or `["*"]`. */
  units: z.array(z.string().min(1).max(64)).min(1).max(10_000),
});
export type PlanInput = z.infer<typeof PlanInput>;

export async function createPlan(ctx: FleetContext, input: unknown): Promise<string> {
  const p = PlanInput.parse(input);
  const id = newId("p");
  await insertPlan(ctx, id, p);
  return id;
}

/**
 * A plan's terms changed: name, monthly fee (from the next charge on), allowances and units (in the next
 * entitlement list the plan cycle publishes). The currency stays: members' charges are in it.
 */
export async function editPlan(ctx: FleetContext, id: string, input: unknown): Promise<void> {
  const p = PlanInput.parse(input);
  const old = await planById(ctx, id);
  if (old === undefined) throw new PlansError(404, "no such plan");
  if (old.currency !== p.currency) throw new PlansError(409, `the currency stays ${old.currency}`);
  await updatePlan(ctx, id, p);
}

// ---- sign-up ----------------------------------------------------------------------------------------------

export const SignUpInput = z.strictObject({
  planId: z.string().min(1).max(64),
  name: z.string().trim().min(1).max(60),
  /** Digits with country code, e.g. 4520031801; optional (pre-fills the landing page). */
  phone: z
    .string()
    .trim()
    .regex(/^\+?[0-9]{8,15}$/)
    .optional(),
  /** Typed card UID: hashed at once, never stored nor logged. */
  badgeUid: z.string().min(1).max(40),
  companyId: z.string().min(1).max(64).optional(),
});

/** Creates a pending member and its agreement; returns the landing link for the QR code. */
export async function signUp(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  input: unknown,
): Promise<{ memberId: string; landingUrl: string }> {
  const r = SignUpInput.safeParse(input);
  if (!r.success) throw new PlansError(400, `invalid sign-up: ${r.error.issues[0]?.path.join(".") ?? ""}`);
  const v = r.data;
  const badge = hashBadge(v.badgeUid, s.badgeSalt);
  const plan = await activePlan(ctx, v.planId);
  await assertCardFree(ctx, badge);
  const memberId = newId("m");
  await insertMember(ctx, {
    id: memberId,
    planId: plan.id,
    status: "pending",
    name: v.name,
    phone: v.phone ?? null,
    badge,
    companyId: v.companyId ?? null,
  });
  const cb = `${s.publicUrl}/plans/callbacks/agreements/${memberId}`;
  let created: { id: string; landingUrl: string };
  try {
    created = await client.createAgreement({
      amount: plan.price,
      currency: plan.currency,
      countryCode: s.countryCode,
      plan: plan.name,
      description: `${plan.name}: monthly plan`.slice(0, 60),
      externalId: memberId,
      expirationMinutes: s.agreementTimeoutMinutes ?? 60,
      links: { userRedirect: s.userRedirectUrl, success: `${cb}/success`, cancel: `${cb}/cancel` },
      mobilePhoneNumber: v.phone?.replace(/^\+/, ""),
      frequency: 12,
    });
  } catch (err) {
    // No agreement: the sign-up did not happen (the card may sign up again).
    await deleteMember(ctx, memberId);
    throw err;
  }
  await setAgreement(ctx, memberId, created);
  ctx.logger.info({ memberId, planId: plan.id, agreementId: created.id }, "plan sign-up: agreement created");
  return { memberId, landingUrl: created.landingUrl };
}

// ---- agreements -------------------------------------------------------------------------------------------

const AgreementCallback = z.object({
  agreement_id: z.string().min(1),
  external_id: z.string().nullable().optional(),
  status: z.enum(["Accepted", "Rejected", "Expired", "Canceled"]),
  status_text: z.string().nullable().optional(),
  timestamp: z.string().optional(),
});

/** An agreement callback for `memberId` (verified and first seen by the caller). */
export async function applyAgreementCallback(
  ctx: FleetContext,
  memberId: string,
  body: unknown,
): Promise<string> {
  const cb = AgreementCallback.parse(body);
  const m = await memberById(ctx, memberId);
  if (m === undefined || m.agreement_id !== cb.agreement_id) throw new PlansError(404, "no such agreement");
  const now = ctx.clock.now();
  if (cb.status === "Accepted") {
    if (m.status !== "pending") return m.status;
    await setStatus(ctx, m.id, "active", {
      agreement_status: "Accepted",
      activated_at: now,
      landing_url: null,
    });
    return "active";
  }
  if (m.status === "ended") return "ended";
  await setStatus(ctx, m.id, "ended", {
    agreement_status: cb.status,
    landing_url: null,
    grace_until: null,
    reason: `agreement ${cb.status}`,
  });
  return "ended";
}

/** Ends a membership from the dashboard: the agreement is cancelled as the merchant; the member is ended. */
export async function endMembership(
  ctx: FleetContext,
  client: SubscriptionsClient,
  memberId: string,
  by: string,
): Promise<void> {
  const m = await memberById(ctx, memberId);
  if (m === undefined) throw new PlansError(404, "no such member");
  if (m.status === "ended") return;
  if (m.agreement_id !== null && m.agreement_status === "Accepted")
    await client.cancelAgreement(m.agreement_id);
  await setStatus(ctx, m.id, "ended", {
    agreement_status: m.agreement_status === "Accepted" ? "Canceled" : m.agreement_status,
    grace_until: null,
    reason: `ended by ${by}`,
  });
}
