/**
 * The journal's finished sessions as fleetWire `SessionData` (issue 17: `vendd journal export`, and
 * `vendd reconcile` on a unit without a fleet). Read-only: a `readonly` connection that never takes the
 * journal lock, safe while the daemon runs (like view.ts).
 *
 * `captured` is the sum of the session's capture intents the service confirmed (`done`), or, for a captured
 * session without one (the older interface's payment mode captures at start), the decision's amount;
 * `refunded` the sum of its confirmed refund intents.
 */
import Database from "better-sqlite3";
import { SessionData } from "../core/fleetWire.js";
import { classifyJournalError } from "./problems.js";
import type { SessionDbRow } from "./rows.js";

/** A finished session (`SELECT s.*`, so the sessions row, its result and close time set) with its sums. */
interface Row extends Omit<SessionDbRow, "result" | "closed_at"> {
  result: string;
  closed_at: number;
  captured: number | null;
  refunded: number | null;
}

interface VendRow {
  session_id: string;
  item: number;
  price: number;
  outcome: string | null;
}

export interface ExportResult {
  sessions: SessionData[];
  /** Sessions that do not fit the wire contract (e.g. an id with other characters), with why. */
  skipped: { orderId: string; why: string }[];
}

/** Finished sessions closed in [from, to) (epoch ms; either open-ended), oldest first. */
export function exportSessions(
  path: string,
  opts: { from?: number; to?: number; currency: string },
): ExportResult {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 2000 });
  } catch (err) {
    throw classifyJournalError(err, path);
  }
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").get();
    if (has === undefined) return { sessions: [], skipped: [] };
    const rows = db
      .prepare(
        `SELECT s.*,
           (SELECT sum(amount) FROM intents i WHERE i.session_id = s.id AND i.op = 'capture' AND i.state = 'done') AS captured,
           (SELECT sum(amount) FROM intents i WHERE i.session_id = s.id AND i.op = 'refund' AND i.state = 'done') AS refunded
         FROM sessions s
         WHERE s.closed_at IS NOT NULL AND s.result IS NOT NULL AND s.closed_at >= ? AND s.closed_at < ?
         ORDER BY s.closed_at, s.rowid`,
      )
      .all(opts.from ?? 0, opts.to ?? Number.MAX_SAFE_INTEGER) as Row[];
    const vends = new Map<string, VendRow[]>();
    const hasVends = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vends'").get();
    if (hasVends !== undefined && rows.length > 0) {
      const stmt = db.prepare(
        "SELECT session_id, item, price, outcome FROM vends WHERE session_id IN (SELECT id FROM sessions WHERE closed_at >= ? AND closed_at < ?) ORDER BY id",
      );
      for (const v of stmt.all(opts.from ?? 0, opts.to ?? Number.MAX_SAFE_INTEGER) as VendRow[]) {
        const list = vends.get(v.session_id) ?? [];
        list.push(v);
        vends.set(v.session_id, list);
      }
    }
    const members = planMembers(db, opts.from ?? 0, opts.to ?? Number.MAX_SAFE_INTEGER);
    const out: ExportResult = { sessions: [], skipped: [] };
    for (const r of rows) {
      const captured = r.captured ?? (r.result === "captured" ? (r.decision_amount ?? 0) : 0);
      const candidate = {
        sessionId: r.id,
        orderId: r.order_id,
        paymentId: r.payment_id,
        driver: r.driver,
        flow: r.flow,
        item: r.item,
        price: r.price,
        result: r.result,
        reason: (r.reason ?? r.decision_reason ?? "").slice(0, 500),
        approved: r.approved_amount ?? 0,
        captured,
        refunded: r.refunded ?? 0,
        currency: opts.currency,
        openedAt: r.opened_at,
        closedAt: r.closed_at,
        vends: (vends.get(r.id) ?? [])
          .slice(0, 100)
          .map((v) => ({ item: v.item, price: v.price, outcome: v.outcome })),
        review: r.review === 1,
        // A plan vend names its member as the outbox's `session` event does (ids only, never the badge).
        member: members.get(r.id) ?? null,
      };
      const p = SessionData.safeParse(candidate);
      if (p.success) out.sessions.push(p.data);
      else {
        const i = p.error.issues[0];
        out.skipped.push({ orderId: r.order_id, why: `${i?.path.join(".") ?? ""}: ${i?.message ?? ""}` });
      }
    }
    return out;
  } catch (err) {
    throw classifyJournalError(err, path);
  } finally {
    db.close();
  }
}

/** The members of the plan vends closed in [from, to), by session id (outbox.ts sessionData's reference). */
function planMembers(db: Database.Database, from: number, to: number): Map<string, SessionMember> {
  const out = new Map<string, SessionMember>();
  const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'plan_sessions'").get();
  if (has === undefined) return out;
  const rows = db
    .prepare(
      `SELECT p.session_id AS sessionId, p.member_id AS memberId, p.plan_id AS planId FROM plan_sessions p
       JOIN sessions s ON s.id = p.session_id WHERE s.closed_at >= ? AND s.closed_at < ?`,
    )
    .all(from, to) as { sessionId: string; memberId: string; planId: string }[];
  for (const r of rows) out.set(r.sessionId, { memberId: r.memberId, planId: r.planId });
  return out;
}

type SessionMember = NonNullable<SessionData["member"]>;
