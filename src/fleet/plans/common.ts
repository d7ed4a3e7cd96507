/**
 * What the plans flows share: the settings, `PlansError`, periods, card UIDs and badge hashes, the member
 * rows' small helpers (status, unpaid periods) and the payment callback's shape. Internal to
 * src/fleet/plans; the public names are re-exported by service.ts.
 */
import { randomBytes } from "node:crypto";
import * as z from "zod";
import { badgeHash } from "../../update/entitlements.js";
import type { SecretKey } from "../../update/minisign.js";
import { dayOf, type FleetContext } from "../context.js";
import type { MemberStatus, MembersTable, PlansTable } from "./schema.js";
import { chargeStatesOf, memberWithBadge, updateMemberStatus } from "./store/members.js";
import { planById } from "./store/plans.js";

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

export function utcDay(ms: number): string {
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

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(6).toString("hex")}`;
}

/** The plan `planId` if it exists and is active; else a 404 `PlansError`. */
export async function activePlan(ctx: FleetContext, planId: string) {
  const plan = await planById(ctx, planId);
  if (plan === undefined || plan.active !== 1) throw new PlansError(404, "no such plan");
  return plan;
}

/** A 409 `PlansError` when the badge already belongs to a pending, active or suspended member. */
export async function assertCardFree(ctx: FleetContext, badge: string): Promise<void> {
  const taken = await memberWithBadge(ctx, badge);
  if (taken !== undefined) throw new PlansError(409, "this card already belongs to a member");
}

export async function setStatus(
  ctx: FleetContext,
  memberId: string,
  status: MemberStatus,
  patch: Partial<MembersTable> = {},
): Promise<void> {
  await updateMemberStatus(ctx, memberId, status, patch);
  ctx.logger.info({ memberId, status, reason: patch.reason }, "plan member status");
}

/** Periods with a failed (declined, rejected) attempt and no executed one: the fee is still owed. */
export async function unpaidPeriods(ctx: FleetContext, memberId: string): Promise<string[]> {
  const rows = await chargeStatesOf(ctx, memberId);
  const failed = new Set<string>();
  const paid = new Set<string>();
  for (const r of rows) {
    if (r.state === "executed") paid.add(r.period);
    else if (r.state === "failed" || r.state === "declined" || r.state === "rejected") failed.add(r.period);
  }
  return [...failed].filter((p) => !paid.has(p));
}

export const PaymentCallback = z.object({
  agreement_id: z.string(),
  payment_id: z.string(),
  amount: z.union([z.number(), z.string()]).nullable().optional(),
  status: z.string(),
  status_text: z.string().nullable().optional(),
  status_code: z.union([z.number(), z.string()]).nullable().optional(),
  external_id: z.string().nullable().optional(),
  payment_type: z.enum(["Regular", "OneOff"]).optional(),
});

export type PlanLimits = Pick<PlansTable, "day_items" | "day_amount" | "month_items" | "month_amount">;
