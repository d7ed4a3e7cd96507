import type Database from "better-sqlite3";

/**
 * The journal's prepared statements, one place for its SQL (sqlite.ts runs them). Prepared once per
 * connection; `seq` allocates order ids, the `drop*` ones serve retention.
 */
export function prepareStatements(db: Database.Database) {
  return {
    seq: db.prepare(
      "INSERT INTO meta (key, value) VALUES ('order_seq', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value",
    ),
    openSession: db.prepare(
      "INSERT INTO sessions (id, order_id, flow, item, price, driver, opened_at, currency) VALUES (@id, @orderId, @flow, @item, @price, @driver, @at, @currency)",
    ),
    intent: db.prepare(
      "INSERT INTO intents (session_id, op, order_id, payment_id, amount, idempotency_key, state, created_at, updated_at) VALUES (@sessionId, @op, @orderId, @paymentId, @amount, @key, 'pending', @at, @at) RETURNING id",
    ),
    completeIntent: db.prepare(
      "UPDATE intents SET state = @state, detail = @detail, updated_at = @at WHERE id = @id",
    ),
    intentSession: db.prepare("SELECT session_id, op FROM intents WHERE id = ?"),
    setPaymentId: db.prepare("UPDATE sessions SET payment_id = @paymentId WHERE id = @id"),
    approved: db.prepare(
      "UPDATE sessions SET approved_amount = COALESCE(approved_amount, 0) + @price WHERE id = @id",
    ),
    vendRow: db.prepare(
      "INSERT INTO vends (session_id, item, price, approved_at) VALUES (@id, @item, @price, @at)",
    ),
    vend: db.prepare("UPDATE sessions SET vend_outcome = @outcome WHERE id = @id"),
    vendOutcome: db.prepare(
      "UPDATE vends SET outcome = @outcome, settled_at = @at WHERE id = (SELECT max(id) FROM vends WHERE session_id = @id AND outcome IS NULL)",
    ),
    planSession: db.prepare(
      "INSERT INTO plan_sessions (session_id, member_id, plan_id, badge, day, month) VALUES (@id, @memberId, @planId, @badge, @day, @month)",
    ),
    planOf: db.prepare(
      "SELECT p.member_id AS memberId, p.plan_id AS planId, p.badge, p.day, p.month, s.price FROM plan_sessions p JOIN sessions s ON s.id = p.session_id WHERE p.session_id = ?",
    ),
    planCount: db.prepare(
      "INSERT INTO plan_usage (member_id, period, items, amount) VALUES (@memberId, @period, 1, @amount) ON CONFLICT (member_id, period) DO UPDATE SET items = items + 1, amount = amount + excluded.amount",
    ),
    planUsage: db.prepare("SELECT items, amount FROM plan_usage WHERE member_id = ? AND period = ?"),
    dropPlanSession: db.prepare("DELETE FROM plan_sessions WHERE session_id = ?"),
    vends: db.prepare("SELECT id, item, price, outcome FROM vends WHERE session_id = ? ORDER BY id"),
    decide: db.prepare(
      "UPDATE sessions SET decision = @action, decision_amount = @amount, decision_reason = @reason, review = max(review, @review) WHERE id = @id",
    ),
    flag: db.prepare("UPDATE sessions SET review = 1 WHERE id = ?"),
    meta: db.prepare("SELECT value FROM meta WHERE key = ?").pluck(),
    close: db.prepare(
      "UPDATE sessions SET result = @result, reason = @reason, closed_at = @at WHERE id = @id",
    ),
    event: db.prepare("INSERT INTO events (session_id, at, type, data) VALUES (?, ?, ?, ?)"),
    session: db.prepare("SELECT * FROM sessions WHERE id = ?"),
    intents: db.prepare("SELECT * FROM intents WHERE session_id = ? ORDER BY id"),
    unresolved: db.prepare(
      "SELECT * FROM sessions WHERE closed_at IS NULL OR result = 'unsettled' ORDER BY opened_at, rowid",
    ),
    ownsLive: db.prepare("SELECT 1 FROM sessions WHERE order_id = ? AND closed_at IS NULL"),
    sessions: db.prepare("SELECT * FROM sessions ORDER BY opened_at DESC, rowid DESC LIMIT ?"),
    expired: db.prepare(
      "SELECT id FROM sessions WHERE closed_at IS NOT NULL AND closed_at < ? AND result <> 'unsettled' LIMIT ?",
    ),
    dropEvents: db.prepare("DELETE FROM events WHERE session_id = ?"),
    dropVends: db.prepare("DELETE FROM vends WHERE session_id = ?"),
    dropIntents: db.prepare("DELETE FROM intents WHERE session_id = ?"),
    dropSession: db.prepare("DELETE FROM sessions WHERE id = ?"),
    dropLooseEvents: db.prepare("DELETE FROM events WHERE session_id IS NULL AND at < ?"),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
