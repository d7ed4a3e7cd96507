/**
 * Writes a whole selection sale into a journal the way the engine does: start intent done, payment id set,
 * one vend approved and delivered, capture decided and done, session closed (unless `close: false`).
 */
import type { SqliteJournal } from "../../src/journal/sqlite.js";

export interface JournalSale {
  id: string;
  item: number;
  price: number;
  /** Amount captured; the price by default. */
  captured?: number;
  driver: string;
  /** The payment id to set and capture against; `pay-<id>` by default, `"order"` for the order id. */
  paymentId?: string | "order";
  /** Detail of the completed start / capture intents; "ok" / "captured" by default. */
  startDetail?: string;
  captureDetail?: string;
  /** Reason of the capture decision; "vended" by default. */
  reason?: string;
  /** Close the session as captured (default true). */
  close?: boolean;
}

/** Records the sale; returns its order id. */
export function journalSale(j: SqliteJournal, s: JournalSale): string {
  const { id, item, price } = s;
  const amount = s.captured ?? price;
  const orderId = j.nextOrderId();
  const paymentId = s.paymentId === "order" ? orderId : (s.paymentId ?? `pay-${id}`);
  j.openSession({ id, orderId, flow: "selection", item, price, driver: s.driver });
  const start = j.recordIntent({ sessionId: id, op: "start", orderId, paymentId: null, amount: price });
  j.completeIntent(start.id, "done", s.startDetail ?? "ok");
  j.setPaymentId(id, paymentId);
  j.approveVend(id, item, price);
  j.recordVend(id, "success");
  j.decide(id, { action: "capture", amount, reason: s.reason ?? "vended", review: false });
  const cap = j.recordIntent({ sessionId: id, op: "capture", orderId, paymentId, amount });
  j.completeIntent(cap.id, "done", s.captureDetail ?? "captured");
  if (s.close !== false) j.closeSession(id, "captured", "vended");
  return orderId;
}
