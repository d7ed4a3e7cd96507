/**
 * The plans tables (issue 18), added to the fleet's database by migration "0002_plans" (migration.ts).
 * Conventions as in db/schema.ts: epoch ms and minor units in bigint columns, JSON as text, 0/1 booleans.
 * A member's badge is stored only as its salted hash (update/entitlements.ts `badgeHash`), never as a UID.
 */

export interface PlansTable {
  id: string;
  name: string;
  /** Monthly fee, minor units. */
  price: number;
  currency: "DKK" | "EUR";
  /** Allowances: null = no limit of that kind. */
  day_items: number | null;
  day_amount: number | null;
  month_items: number | null;
  month_amount: number | null;
  /** JSON array of unit ids where the plan is valid, or `["*"]`. */
  units: string;
  active: number;
  created_at: number;
}

export type MemberStatus = "pending" | "active" | "suspended" | "ended";

export interface MembersTable {
  id: string;
  plan_id: string;
  status: MemberStatus;
  name: string;
  phone: string | null;
  /** badgeHash(UID, fleet badge salt); never the UID. */
  badge_hash: string;
  /** Company-paid member (companies are defined elsewhere); null for members who pay themselves. */
  company_id: string | null;
  agreement_id: string | null;
  /** Pending, Accepted, Rejected, Expired, Canceled: the agreement's last known status. */
  agreement_status: string | null;
  landing_url: string | null;
  /** A failed charge's grace period ends here; null when nothing is overdue. */
  grace_until: number | null;
  /** Why the member is suspended or ended. */
  reason: string;
  created_at: number;
  activated_at: number | null;
  updated_at: number;
}

export interface PlanChargesTable {
  /** Our external id: `<member>-<period>-<attempt>`. */
  id: string;
  member_id: string;
  /** `YYYY-MM` in the fleet's time zone. */
  period: string;
  due_date: string;
  amount: number;
  attempt: number;
  /** requested → pending → executed | failed | declined | rejected. */
  state: "requested" | "pending" | "executed" | "failed" | "declined" | "rejected";
  payment_id: string | null;
  status_text: string;
  requested_at: number;
  updated_at: number;
}

export interface PlanOveragesTable {
  /** Our external id: `ov-<member>-<period>`. */
  id: string;
  member_id: string;
  period: string;
  /** Vends over the allowance, and what they cost (minor units). */
  items: number;
  amount: number;
  /** requested → reserved → captured; or rejected | expired | failed; `none` when nothing was over. */
  state: "none" | "requested" | "reserved" | "captured" | "rejected" | "expired" | "failed";
  oneoff_id: string | null;
  landing_url: string | null;
  status_text: string;
  created_at: number;
  updated_at: number;
}

export interface PlanCallbacksTable {
  /** SHA-256 (hex) of the route and the exact body: a replay is recognised and changes nothing. */
  digest: string;
  kind: string;
  received_at: number;
}

export interface PlanRefundsTable {
  /** Our external id. */
  id: string;
  member_id: string;
  /** The service's payment id (a charge's payment_id or an overage's one-off id). */
  payment_id: string;
  /** null = full refund. */
  amount: number | null;
  refund_id: string | null;
  state: "requested" | "issued" | "declined";
  status_text: string;
  requested_by: string;
  created_at: number;
  updated_at: number;
}

export interface PlanEntitlementsTable {
  serial: number;
  document: string;
  signature: string;
  etag: string;
  /** SHA-256 of the members part: a new list is published only when it changes (or the old one ages). */
  content: string;
  issued_at: number;
  valid_until: number;
}

export interface PlansDatabase {
  plans: PlansTable;
  members: MembersTable;
  plan_charges: PlanChargesTable;
  plan_overages: PlanOveragesTable;
  plan_callbacks: PlanCallbacksTable;
  plan_refunds: PlanRefundsTable;
  plan_entitlements: PlanEntitlementsTable;
}

declare module "../db/schema.js" {
  /** The plans feature's tables, added to the fleet's database type (db/schema.ts). */
  interface FleetDatabase extends PlansDatabase {}
}
