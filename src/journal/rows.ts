import type { Intent, IntentOp, SessionResult, SessionRow, VendOutcome } from "./journal.js";

/**
 * The journal's rows as SQLite returns them, and their mapping to the journal's types: one place, shared by
 * the writer (sqlite.ts) and read-only views (tests, tools), which must never open a second writer.
 */
export interface SessionDbRow {
  id: string;
  order_id: string;
  flow: string;
  item: number;
  price: number;
  driver: string;
  payment_id: string | null;
  opened_at: number;
  approved_amount: number | null;
  vend_outcome: string | null;
  decision: string | null;
  decision_amount: number | null;
  decision_reason: string | null;
  review: number;
  result: string | null;
  reason: string | null;
  closed_at: number | null;
  /** ISO 4217 code of the amounts (migration 7); null in rows older than it, absent in older journals. */
  currency?: string | null;
}

export interface IntentDbRow {
  id: number;
  session_id: string;
  op: string;
  order_id: string;
  payment_id: string | null;
  amount: number;
  idempotency_key: string;
  state: string;
  created_at: number;
}

export function toSession(r: SessionDbRow): SessionRow {
  return {
    id: r.id,
    orderId: r.order_id,
    flow: r.flow,
    item: r.item,
    price: r.price,
    driver: r.driver,
    paymentId: r.payment_id,
    openedAt: r.opened_at,
    approvedAmount: r.approved_amount,
    vendOutcome: r.vend_outcome as VendOutcome | null,
    decision:
      r.decision === null
        ? null
        : {
            action: r.decision === "capture" ? "capture" : "cancel",
            amount: r.decision_amount ?? 0,
            reason: r.decision_reason ?? "",
            review: r.review === 1,
          },
    result: r.result as SessionResult | null,
    reason: r.reason,
    closedAt: r.closed_at,
  };
}

export function toIntent(r: IntentDbRow): Intent {
  return {
    id: r.id,
    sessionId: r.session_id,
    op: r.op as IntentOp,
    orderId: r.order_id,
    paymentId: r.payment_id,
    amount: r.amount,
    idempotencyKey: r.idempotency_key,
    state: r.state as Intent["state"],
    createdAt: r.created_at,
  };
}
