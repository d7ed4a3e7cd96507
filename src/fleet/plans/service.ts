/**
 * Plans on the fleet (issue 18): plans, members, sign-up, the service's callbacks, monthly charges with a
 * grace period, overage billed as a one-off payment, refunds, and the scheduler step `runPlanCycle`.
 * Everything takes the instant from the caller or `ctx.clock`: nothing waits on real time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import * as z from "zod";
import type { Minor } from "../../core/money.js";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import { badgeHash } from "../../update/entitlements.js";
import type { SecretKey } from "../../update/minisign.js";
import { dayOf, type FleetContext } from "../context.js";
import type { MemberStatus, MembersTable, PlansTable } from "./schema.js";

const MS_DAY = 86_400_000;

/** What the plans module needs besides the fleet context. Secrets here are never logged. */
export interface PlansSettings {
  /** The fleet's https base URL as the service reaches it (callbacks), no trailing slash. */
  publicUrl: string;
  /** Where the app sends the member after accepting (https). */
  userRedirectUrl: string;
  /** The value the service puts in the Authorization header of every callback (token68). */
  callbackApiKey: string;
  /** HMAC key of the public sign-up form's CSRF tokens. */
  csrfSecret: Buffer;
  /** The fleet's badge salt (base64url), the same one the entitlement lists carry. */
  badgeSalt: string;
  /** The entitlement secret key (decrypted), or null: lists are then not published. */
  entitlementKey: SecretKey | null;
  countryCode: "DK" | "FI";
  /** Fleet-side grace after a failed monthly payment before the member is suspended (default 3 days). */
  graceMs?: number;
  /** Grace days asked of the service per charge (1–3; default 3). */
  serviceGraceDays?: 1 | 2 | 3;
  /** Next month's fee is requested this many days ahead of its due date (default 7; the service allows 126). */
  chargeAheadDays?: number;
  /** Charge attempts per period (default 8): a failed fee is requested again, due the next day. */
  maxChargeAttempts?: number;
  /** One-off overage payments reserve automatically (only where the merchant is approved for it). */
  autoReserve: boolean;
  /** Minutes a sign-up's agreement waits for acceptance (default 60; the service allows 5–20160). */
  agreementTimeoutMinutes?: number;
  /** How long an entitlement list is valid (default 7 days); a new one is published at half of it. */
  entitlementValidityMs?: number;
}

export class PlansError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "PlansError";
  }
}

/** `YYYY-MM` of an instant in the fleet's time zone. */
export function periodOf(ms: number, timeZone: string): string {
  return dayOf(ms, timeZone).slice(0, 7);
}

export function nextPeriod(period: string): string {
  const [y, m] = period.split("-").map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, "0")}`;
}

export function previousPeriod(period: string): string {
  const [y, m] = period.split("-").map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, "0")}`;
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Normalises a typed card UID (hex with optional `:`/`-`/spaces) to upper-case hex, or throws. */
export function normaliseUid(typed: string): string {
  const uid = typed.replace(/[\s:-]/g, "").toUpperCase();
  if (!/^[0-9A-F]{8,20}$/.test(uid)) throw new PlansError(400, "the card UID must be 8 to 20 hex digits");
  return uid;
}

/** The only thing kept of a badge: its salted hash. The UID is dropped right here. */
export function hashBadge(typedUid: string, badgeSalt: string): string {
  return badgeHash(normaliseUid(typedUid), badgeSalt);
}

function newId(prefix: string): string {
  return `${prefix}${randomBytes(6).toString("hex")}`;
}

/** The plan `planId` if it exists and is active; else a 404 `PlansError`. */
async function activePlan(ctx: FleetContext, planId: string) {
  const plan = await ctx.db.selectFrom("plans").selectAll().where("id", "=", planId).executeTakeFirst();
  if (plan === undefined || plan.active !== 1) throw new PlansError(404, "no such plan");
  return plan;
}

/** A 409 `PlansError` when the badge already belongs to a pending, active or suspended member. */
async function assertCardFree(ctx: FleetContext, badge: string): Promise<void> {
  const taken = await ctx.db
    .selectFrom("members")
    .select("id")
    .where("badge_hash", "=", badge)
    .where("status", "in", ["pending", "active", "suspended"])
    .executeTakeFirst();
  if (taken !== undefined) throw new PlansError(409, "this card already belongs to a member");
}

/**
 * A new member row: a sign-up starts `pending` (active once its agreement is), a company member starts
 * `active` (activated now); no agreement, landing page or grace yet.
 */
async function insertMember(
  ctx: FleetContext,
  m: {
    id: string;
    planId: string;
    status: "pending" | "active";
    name: string;
    phone: string | null;
    badge: string;
    companyId: string | null;
  },
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .insertInto("members")
    .values({
      id: m.id,
      plan_id: m.planId,
      status: m.status,
      name: m.name,
      phone: m.phone,
      badge_hash: m.badge,
      company_id: m.companyId,
      agreement_id: null,
      agreement_status: null,
      landing_url: null,
      grace_until: null,
      reason: "",
      created_at: now,
      activated_at: m.status === "active" ? now : null,
      updated_at: now,
    })
    .execute();
}

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
  await ctx.db
    .insertInto("plans")
    .values({
      id,
      name: p.name,
      price: p.price,
      currency: p.currency,
      day_items: p.dayItems,
      day_amount: p.dayAmount,
      month_items: p.monthItems,
      month_amount: p.monthAmount,
      units: JSON.stringify(p.units),
      active: 1,
      created_at: ctx.clock.now(),
    })
    .execute();
  return id;
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
    await ctx.db.deleteFrom("members").where("id", "=", memberId).execute();
    throw err;
  }
  await ctx.db
    .updateTable("members")
    .set({
      agreement_id: created.id,
      agreement_status: "Pending",
      landing_url: created.landingUrl,
      updated_at: ctx.clock.now(),
    })
    .where("id", "=", memberId)
    .execute();
  ctx.logger.info({ memberId, planId: plan.id, agreementId: created.id }, "plan sign-up: agreement created");
  return { memberId, landingUrl: created.landingUrl };
}

// ---- callbacks --------------------------------------------------------------------------------------------

/** Constant-time check of a callback's Authorization header against the key the fleet set. */
export function callbackAuthorised(header: unknown, s: PlansSettings): boolean {
  if (typeof header !== "string") return false;
  const a = createHash("sha256").update(header).digest();
  const b = createHash("sha256").update(s.callbackApiKey).digest();
  return timingSafeEqual(a, b);
}

/** Records a callback's digest; null when it was seen before (a replay: nothing more is done). */
export async function firstSighting(ctx: FleetContext, kind: string, body: string): Promise<string | null> {
  const digest = createHash("sha256").update(`${kind}\n${body}`).digest("hex");
  const r = await ctx.db
    .insertInto("plan_callbacks")
    .values({ digest, kind, received_at: ctx.clock.now() })
    .onConflict((oc) => oc.column("digest").doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1 ? digest : null;
}

const AgreementCallback = z.object({
  agreement_id: z.string().min(1),
  external_id: z.string().nullable().optional(),
  status: z.enum(["Accepted", "Rejected", "Expired", "Canceled"]),
  status_text: z.string().nullable().optional(),
  timestamp: z.string().optional(),
});

async function setStatus(
  ctx: FleetContext,
  memberId: string,
  status: MemberStatus,
  patch: Partial<MembersTable> = {},
): Promise<void> {
  await ctx.db
    .updateTable("members")
    .set({ ...patch, status, updated_at: ctx.clock.now() })
    .where("id", "=", memberId)
    .execute();
  ctx.logger.info({ memberId, status, reason: patch.reason }, "plan member status");
}

/** An agreement callback for `memberId` (verified and first seen by the caller). */
export async function applyAgreementCallback(
  ctx: FleetContext,
  memberId: string,
  body: unknown,
): Promise<string> {
  const cb = AgreementCallback.parse(body);
  const m = await ctx.db.selectFrom("members").selectAll().where("id", "=", memberId).executeTakeFirst();
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

const PaymentCallback = z.object({
  agreement_id: z.string(),
  payment_id: z.string(),
  amount: z.union([z.number(), z.string()]).nullable().optional(),
  status: z.string(),
  status_text: z.string().nullable().optional(),
  status_code: z.union([z.number(), z.string()]).nullable().optional(),
  external_id: z.string().nullable().optional(),
  payment_type: z.enum(["Regular", "OneOff"]).optional(),
});
const PaymentCallbacks = z.union([z.array(PaymentCallback), PaymentCallback]);

/** Payment callbacks (one object or a batch): charges and overage one-offs. */
export async function applyPaymentCallbacks(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  body: unknown,
): Promise<number> {
  const parsed = PaymentCallbacks.parse(body);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  let applied = 0;
  for (const e of list) {
    if (e.payment_type === "OneOff" || (await isOverage(ctx, e.payment_id))) {
      if (await applyOneOffEvent(ctx, client, e)) applied++;
    } else if (await applyChargeEvent(ctx, s, e)) applied++;
  }
  return applied;
}

async function isOverage(ctx: FleetContext, paymentId: string): Promise<boolean> {
  const r = await ctx.db
    .selectFrom("plan_overages")
    .select("id")
    .where("oneoff_id", "=", paymentId)
    .executeTakeFirst();
  return r !== undefined;
}

const CHARGE_STATES: Record<string, "executed" | "failed" | "declined" | "rejected"> = {
  Executed: "executed",
  Failed: "failed",
  Declined: "declined",
  Rejected: "rejected",
};

async function applyChargeEvent(
  ctx: FleetContext,
  s: PlansSettings,
  e: z.infer<typeof PaymentCallback>,
): Promise<boolean> {
  const next = CHARGE_STATES[e.status];
  if (next === undefined) return false;
  let c = await ctx.db
    .selectFrom("plan_charges")
    .selectAll()
    .where("payment_id", "=", e.payment_id)
    .executeTakeFirst();
  if (c === undefined && e.external_id)
    c = await ctx.db
      .selectFrom("plan_charges")
      .selectAll()
      .where("id", "=", e.external_id)
      .executeTakeFirst();
  if (c === undefined) return false;
  const m = await ctx.db.selectFrom("members").selectAll().where("id", "=", c.member_id).executeTakeFirst();
  if (m === undefined || m.agreement_id !== e.agreement_id) return false;
  if (c.state === "executed" || c.state === next) return false;
  const now = ctx.clock.now();
  await ctx.db
    .updateTable("plan_charges")
    .set({ state: next, payment_id: e.payment_id, status_text: e.status_text ?? "", updated_at: now })
    .where("id", "=", c.id)
    .execute();
  ctx.logger.info({ memberId: m.id, charge: c.id, state: next }, "plan charge");
  if (next === "executed") {
    const unpaid = await unpaidPeriods(ctx, m.id);
    if (unpaid.length === 0) {
      if (m.status === "suspended" && m.reason === "payment failed")
        await setStatus(ctx, m.id, "active", { grace_until: null, reason: "" });
      else if (m.grace_until !== null)
        await ctx.db
          .updateTable("members")
          .set({ grace_until: null, updated_at: now })
          .where("id", "=", m.id)
          .execute();
    }
  } else if (m.status === "active" && m.grace_until === null) {
    await ctx.db
      .updateTable("members")
      .set({ grace_until: now + (s.graceMs ?? 3 * MS_DAY), updated_at: now })
      .where("id", "=", m.id)
      .execute();
  }
  return true;
}

/** Periods with a failed (declined, rejected) attempt and no executed one: the fee is still owed. */
async function unpaidPeriods(ctx: FleetContext, memberId: string): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom("plan_charges")
    .select(["period", "state"])
    .where("member_id", "=", memberId)
    .execute();
  const failed = new Set<string>();
  const paid = new Set<string>();
  for (const r of rows) {
    if (r.state === "executed") paid.add(r.period);
    else if (r.state === "failed" || r.state === "declined" || r.state === "rejected") failed.add(r.period);
  }
  return [...failed].filter((p) => !paid.has(p));
}

const ONEOFF_STATES: Record<string, "reserved" | "rejected" | "expired" | "requested"> = {
  Reserved: "reserved",
  Rejected: "rejected",
  Expired: "expired",
  Requested: "requested",
};

async function applyOneOffEvent(
  ctx: FleetContext,
  client: SubscriptionsClient,
  e: z.infer<typeof PaymentCallback>,
): Promise<boolean> {
  const next = ONEOFF_STATES[e.status];
  if (next === undefined) return false;
  const o = await ctx.db
    .selectFrom("plan_overages")
    .selectAll()
    .where("oneoff_id", "=", e.payment_id)
    .executeTakeFirst();
  if (o === undefined || o.state === "captured" || o.state === next) return false;
  await ctx.db
    .updateTable("plan_overages")
    .set({ state: next, status_text: e.status_text ?? "", updated_at: ctx.clock.now() })
    .where("id", "=", o.id)
    .execute();
  if (next === "reserved") await captureOverage(ctx, client, o.id);
  return true;
}

async function captureOverage(
  ctx: FleetContext,
  client: SubscriptionsClient,
  overageId: string,
): Promise<void> {
  const o = await ctx.db
    .selectFrom("plan_overages")
    .selectAll()
    .where("id", "=", overageId)
    .executeTakeFirst();
  if (o === undefined || o.state !== "reserved" || o.oneoff_id === null) return;
  const m = await ctx.db
    .selectFrom("members")
    .select("agreement_id")
    .where("id", "=", o.member_id)
    .executeTakeFirst();
  if (!m?.agreement_id) return;
  try {
    await client.captureOneOff(m.agreement_id, o.oneoff_id);
  } catch (err) {
    ctx.logger.warn(
      { overage: o.id, err: (err as Error).message },
      "overage capture failed; the next cycle retries",
    );
    return;
  }
  await ctx.db
    .updateTable("plan_overages")
    .set({ state: "captured", updated_at: ctx.clock.now() })
    .where("id", "=", o.id)
    .where("state", "=", "reserved")
    .execute();
  ctx.logger.info({ overage: o.id, amount: o.amount }, "overage captured");
}

const RefundCallback = z.object({
  refund_id: z.string(),
  payment_id: z.string().optional(),
  status: z.string(),
  status_text: z.string().nullable().optional(),
  external_id: z.string().nullable().optional(),
});

export async function applyRefundCallback(ctx: FleetContext, body: unknown): Promise<boolean> {
  const e = RefundCallback.parse(body);
  const state = e.status === "Issued" ? "issued" : e.status === "Declined" ? "declined" : null;
  if (state === null) return false;
  const r = await ctx.db
    .selectFrom("plan_refunds")
    .selectAll()
    .where("refund_id", "=", e.refund_id)
    .executeTakeFirst();
  if (r === undefined || r.state !== "requested") return false;
  await ctx.db
    .updateTable("plan_refunds")
    .set({ state, status_text: e.status_text ?? "", updated_at: ctx.clock.now() })
    .where("id", "=", r.id)
    .execute();
  return true;
}

// ---- refunds ----------------------------------------------------------------------------------------------

/** The service refunds payments up to 30 days after execution (seed 000, Limits). */
export const REFUND_WINDOW_MS = 30 * MS_DAY;

/**
 * Asks the service to refund an executed charge or a captured overage of a member, in full (`amount` null)
 * or in part (minor units). Refused here when outside the window or above what is left to refund.
 */
export async function requestRefund(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  input: { memberId: string; paymentId: string; amount: Minor | null; by: string },
): Promise<string> {
  const m = await ctx.db
    .selectFrom("members")
    .selectAll()
    .where("id", "=", input.memberId)
    .executeTakeFirst();
  if (!m?.agreement_id) throw new PlansError(404, "no such member");
  const charge = await ctx.db
    .selectFrom("plan_charges")
    .select(["amount", "updated_at", "state"])
    .where("member_id", "=", m.id)
    .where("payment_id", "=", input.paymentId)
    .executeTakeFirst();
  const over = await ctx.db
    .selectFrom("plan_overages")
    .select(["amount", "updated_at", "state"])
    .where("member_id", "=", m.id)
    .where("oneoff_id", "=", input.paymentId)
    .executeTakeFirst();
  const paid = charge?.state === "executed" ? charge : over?.state === "captured" ? over : undefined;
  if (paid === undefined) throw new PlansError(404, "no executed payment of this member with that id");
  const now = ctx.clock.now();
  if (now - paid.updated_at > REFUND_WINDOW_MS)
    throw new PlansError(409, "the payment is older than 30 days");
  const done = await ctx.db
    .selectFrom("plan_refunds")
    .select(["amount", "state"])
    .where("payment_id", "=", input.paymentId)
    .where("state", "!=", "declined")
    .execute();
  const refunded = done.reduce((t, r) => t + (r.amount ?? paid.amount), 0);
  const want = input.amount ?? paid.amount - refunded;
  if (want <= 0 || refunded + want > paid.amount)
    throw new PlansError(409, "more than what is left to refund");
  const id = newId("r");
  await ctx.db
    .insertInto("plan_refunds")
    .values({
      id,
      member_id: m.id,
      payment_id: input.paymentId,
      amount: want,
      refund_id: null,
      state: "requested",
      status_text: "",
      requested_by: input.by,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const r = await client.refund(m.agreement_id, input.paymentId, {
    amount: input.amount === null && refunded === 0 ? null : want,
    callbackUrl: `${s.publicUrl}/plans/callbacks/refunds`,
    externalId: id,
  });
  await ctx.db.updateTable("plan_refunds").set({ refund_id: r.id }).where("id", "=", id).execute();
  ctx.logger.info({ memberId: m.id, refund: id, amount: want, by: input.by }, "plan refund requested");
  return id;
}

// ---- usage ------------------------------------------------------------------------------------------------

export interface Usage {
  items: number;
  amount: Minor;
  overItems: number;
  overAmount: Minor;
}

type PlanLimits = Pick<PlansTable, "day_items" | "day_amount" | "month_items" | "month_amount">;

/**
 * A member's plan vends of a period (`sales` rows with member_id, driver `plan`, vends delivered) against
 * the plan's allowances, in order of closing: a vend that would pass a day or month allowance is overage
 * (billed at its price) and does not count against the allowance.
 */
export async function usageOf(
  ctx: FleetContext,
  memberId: string,
  plan: PlanLimits,
  period: string,
): Promise<Usage> {
  const rows = await ctx.db
    .selectFrom("sales")
    .select(["day", "price", "vends_ok", "closed_at"])
    .where("member_id", "=", memberId)
    .where("driver", "=", "plan")
    .where("day", ">=", `${period}-01`)
    .where("day", "<=", `${period}-31`)
    .where("vends_ok", ">", 0)
    .orderBy("closed_at", "asc")
    .execute();
  const u: Usage = { items: 0, amount: 0, overItems: 0, overAmount: 0 };
  const day = new Map<string, { items: number; amount: number }>();
  const within = (limit: number | null, value: number) => limit === null || value <= limit;
  for (const r of rows) {
    for (let i = 0; i < r.vends_ok; i++) {
      const d = day.get(r.day) ?? { items: 0, amount: 0 };
      const ok =
        within(plan.day_items, d.items + 1) &&
        within(plan.day_amount, d.amount + r.price) &&
        within(plan.month_items, u.items + 1) &&
        within(plan.month_amount, u.amount + r.price);
      if (ok) {
        d.items += 1;
        d.amount += r.price;
        u.items += 1;
        u.amount += r.price;
        day.set(r.day, d);
      } else {
        u.overItems += 1;
        u.overAmount += r.price;
      }
    }
  }
  return u;
}

// ---- the cycle --------------------------------------------------------------------------------------------

export interface CycleReport {
  chargesRequested: number;
  suspended: number;
  overagesBilled: number;
  captured: number;
  published: boolean;
}

/**
 * What is due at `now`, idempotent (run it as often as you like; the lead wires it with croner, e.g. every
 * 10 minutes): request this month's fee (first month right away) and next month's `chargeAheadDays` ahead
 * of its due date; re-request a failed fee; suspend members whose grace has passed with a fee unpaid; bill
 * last month's overage as a one-off payment on the agreement; capture reserved overages; publish a new
 * entitlement list when the set of entitled members changed or the last list is half-way to expiry.
 */
export async function runPlanCycle(
  ctx: FleetContext,
  client: SubscriptionsClient,
  now: number,
  s: PlansSettings,
  publish?: (now: number) => Promise<boolean>,
): Promise<CycleReport> {
  const report: CycleReport = {
    chargesRequested: 0,
    suspended: 0,
    overagesBilled: 0,
    captured: 0,
    published: false,
  };
  const members = await ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select([
      "members.id as id",
      "members.status as status",
      "members.agreement_id as agreement_id",
      "members.agreement_status as agreement_status",
      "members.grace_until as grace_until",
      "members.activated_at as activated_at",
      "members.reason as reason",
      "plans.name as plan_name",
      "plans.price as price",
      "plans.day_items as day_items",
      "plans.day_amount as day_amount",
      "plans.month_items as month_items",
      "plans.month_amount as month_amount",
    ])
    .where("members.status", "in", ["active", "suspended"])
    .where("members.agreement_status", "=", "Accepted")
    .execute();
  const current = periodOf(now, ctx.timeZone);
  const next = nextPeriod(current);
  const tomorrow = utcDay(now + MS_DAY);
  const ahead = s.chargeAheadDays ?? 7;
  const maxAttempts = s.maxChargeAttempts ?? 8;
  for (const m of members) {
    if (m.agreement_id === null) continue;
    const charges = await ctx.db
      .selectFrom("plan_charges")
      .selectAll()
      .where("member_id", "=", m.id)
      .execute();
    const latest = (period: string) =>
      charges.filter((c) => c.period === period).sort((a, b) => b.attempt - a.attempt)[0];
    const ask = async (period: string, dueDate: string, attempt: number) => {
      const id = `${m.id}-${period}-${attempt}`;
      const due = dueDate < tomorrow ? tomorrow : dueDate;
      await ctx.db
        .insertInto("plan_charges")
        .values({
          id,
          member_id: m.id,
          period,
          due_date: due,
          amount: m.price,
          attempt,
          state: "requested",
          payment_id: null,
          status_text: "",
          requested_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
      try {
        const r = await client.createCharges(
          [
            {
              agreementId: m.agreement_id as string,
              amount: m.price,
              dueDate: due,
              externalId: id,
              description: `${m.plan_name} ${period}`.slice(0, 60),
              graceDays: s.serviceGraceDays ?? 3,
            },
          ],
          `charge:${id}`,
        );
        const p = r.pending[0];
        if (p !== undefined)
          await ctx.db
            .updateTable("plan_charges")
            .set({ state: "pending", payment_id: p.paymentId, updated_at: now })
            .where("id", "=", id)
            .where("state", "=", "requested")
            .execute();
        else
          await ctx.db
            .updateTable("plan_charges")
            .set({ state: "declined", status_text: r.rejected[0]?.reason ?? "rejected", updated_at: now })
            .where("id", "=", id)
            .execute();
        report.chargesRequested++;
      } catch (err) {
        ctx.logger.warn(
          { charge: id, err: (err as Error).message },
          "charge request failed; the next cycle retries",
        );
        await ctx.db
          .deleteFrom("plan_charges")
          .where("id", "=", id)
          .where("state", "=", "requested")
          .execute();
      }
    };
    if (m.price > 0) {
      const cur = latest(current);
      if (cur === undefined) await ask(current, `${current}-01`, 1);
      else if (["failed", "declined", "rejected"].includes(cur.state) && cur.attempt < maxAttempts)
        await ask(current, tomorrow, cur.attempt + 1);
      const nxt = latest(next);
      const nextDue = `${next}-01`;
      if (nxt === undefined && Date.parse(`${nextDue}T00:00:00Z`) - now <= ahead * MS_DAY)
        await ask(next, nextDue, 1);
      else if (
        nxt !== undefined &&
        ["failed", "declined", "rejected"].includes(nxt.state) &&
        nxt.attempt < maxAttempts
      )
        await ask(next, tomorrow, nxt.attempt + 1);
    }
    // Grace: suspended at its end while a fee is unpaid.
    if (m.status === "active" && m.grace_until !== null && m.grace_until <= now) {
      const unpaid = await unpaidPeriods(ctx, m.id);
      if (unpaid.length > 0) {
        await setStatus(ctx, m.id, "suspended", { reason: "payment failed" });
        report.suspended++;
      } else await ctx.db.updateTable("members").set({ grace_until: null }).where("id", "=", m.id).execute();
    }
    // Overage of the last period, once the period is over.
    const last = previousPeriod(current);
    if (m.activated_at !== null && periodOf(m.activated_at, ctx.timeZone) <= last) {
      const known = await ctx.db
        .selectFrom("plan_overages")
        .select("id")
        .where("member_id", "=", m.id)
        .where("period", "=", last)
        .executeTakeFirst();
      if (
        known === undefined &&
        (await billOverage(ctx, client, s, { ...m, agreement_id: m.agreement_id }, last, now))
      )
        report.overagesBilled++;
    }
  }
  // Reserved but not yet captured (a capture that failed earlier).
  const reserved = await ctx.db
    .selectFrom("plan_overages")
    .select("id")
    .where("state", "=", "reserved")
    .execute();
  for (const r of reserved) {
    await captureOverage(ctx, client, r.id);
    report.captured++;
  }
  if (publish) report.published = await publish(now);
  return report;
}

async function billOverage(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  m: PlanLimits & { id: string; agreement_id: string; plan_name: string },
  period: string,
  now: number,
): Promise<boolean> {
  const u = await usageOf(ctx, m.id, m, period);
  const id = `ov-${m.id}-${period}`;
  const inserted = await ctx.db
    .insertInto("plan_overages")
    .values({
      id,
      member_id: m.id,
      period,
      items: u.overItems,
      amount: u.overAmount,
      state: u.overAmount > 0 ? "requested" : "none",
      oneoff_id: null,
      landing_url: null,
      status_text: "",
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1 || u.overAmount === 0) return false;
  try {
    const o = await client.createOneOff(m.agreement_id, {
      amount: u.overAmount,
      description: `${m.plan_name}: ${u.overItems} over the allowance in ${period}`.slice(0, 60),
      externalId: id,
      redirectUrl: s.userRedirectUrl,
      autoReserve: s.autoReserve,
      expirationMinutes: 7 * 24 * 60,
    });
    await ctx.db
      .updateTable("plan_overages")
      .set({ oneoff_id: o.id, landing_url: s.autoReserve ? null : o.landingUrl, updated_at: now })
      .where("id", "=", id)
      .execute();
  } catch (err) {
    ctx.logger.warn(
      { overage: id, err: (err as Error).message },
      "overage request failed; the next cycle retries",
    );
    await ctx.db.deleteFrom("plan_overages").where("id", "=", id).execute();
    return false;
  }
  ctx.logger.info({ memberId: m.id, period, items: u.overItems, amount: u.overAmount }, "overage billed");
  return true;
}

/** Ends a membership from the dashboard: the agreement is cancelled as the merchant; the member is ended. */
export async function endMembership(
  ctx: FleetContext,
  client: SubscriptionsClient,
  memberId: string,
  by: string,
): Promise<void> {
  const m = await ctx.db.selectFrom("members").selectAll().where("id", "=", memberId).executeTakeFirst();
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

/**
 * A company-paid member (issue 18: the company pays for its staff): active at once, no agreement and no
 * monthly charge here; the company's invoice (another module) bills what the member took. The card UID is
 * hashed at once like at sign-up.
 */
export async function addCompanyMember(
  ctx: FleetContext,
  s: Pick<PlansSettings, "badgeSalt">,
  input: { planId: string; companyId: string; name: string; badgeUid: string },
): Promise<string> {
  const badge = hashBadge(input.badgeUid, s.badgeSalt);
  const plan = await activePlan(ctx, input.planId);
  await assertCardFree(ctx, badge);
  const id = newId("m");
  await insertMember(ctx, {
    id,
    planId: plan.id,
    status: "active",
    name: input.name.trim().slice(0, 60),
    phone: null,
    badge,
    companyId: input.companyId,
  });
  ctx.logger.info({ memberId: id, planId: plan.id, companyId: input.companyId }, "company member added");
  return id;
}
