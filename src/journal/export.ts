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
  /**
   * With `refundsIn` [start, end): per session id, its confirmed refunds done before start and before end
   * (issue 30: a refund is compared on the day it was made).
   */
  refunds?: Map<string, { before: number; by: number }>;
}

const ORDER_ID = /^(.+)-(\d{10})-(\d+)$/;

export function openReadOnly(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true, timeout: 2000 });
  } catch (err) {
    throw classifyJournalError(err, path);
  }
}

export function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** A `meta` value, or null (no such key, or a journal from before it). */
function metaValue(db: Database.Database, key: string): string | null {
  if (!hasTable(db, "meta")) return null;
  const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined;
  return row?.value ?? null;
}

/**
 * Whose journal this is, from the journal alone (issue 30: `vendd reconcile --journal` on a day without
 * sessions): the unit id and currency the daemon recorded in `meta`, else the unit prefix of any session's
 * order id (`<unit>-<epoch>-<seq>`) and the currency of the newest session that has one.
 */
export function journalIdentity(path: string): { unitId: string | null; currency: string | null } {
  const db = openReadOnly(path);
  try {
    let unitId = metaValue(db, "unit_id");
    let currency = metaValue(db, "currency");
    if (hasTable(db, "sessions")) {
      if (unitId === null) {
        const row = db.prepare("SELECT order_id FROM sessions ORDER BY rowid DESC LIMIT 1").get() as
          | { order_id: string }
          | undefined;
        unitId = (row === undefined ? undefined : ORDER_ID.exec(row.order_id)?.[1]) ?? null;
      }
      const columns = db.prepare("SELECT name FROM pragma_table_info('sessions')").all() as {
        name: string;
      }[];
      if (currency === null && columns.some((c) => c.name === "currency")) {
        const row = db
          .prepare("SELECT currency FROM sessions WHERE currency IS NOT NULL ORDER BY rowid DESC LIMIT 1")
          .get() as { currency: string } | undefined;
        currency = row?.currency ?? null;
      }
    }
    return { unitId, currency };
  } catch (err) {
    throw classifyJournalError(err, path);
  } finally {
    db.close();
  }
}

/** What `exportSessions` exports besides the window. */
export interface ExportOptions {
  from?: number;
  to?: number;
  currency?: string | null;
  orderIds?: readonly string[];
  /** Also sessions closed earlier with a refund done in [start, end), and every session's refund times. */
  refundsIn?: { start: number; end: number };
}

/** A finished session with what was captured and refunded of it, by order id. */
const ONE_SESSION = `SELECT s.*,
           (SELECT sum(amount) FROM intents i WHERE i.session_id = s.id AND i.op = 'capture' AND i.state = 'done') AS captured,
           (SELECT sum(amount) FROM intents i WHERE i.session_id = s.id AND i.op = 'refund' AND i.state = 'done') AS refunded
         FROM sessions s WHERE s.order_id = ? AND s.closed_at IS NOT NULL AND s.result IS NOT NULL`;

/** What one export has gathered: the sessions beyond the window (`extra`), and every session's vends. */
interface Gathered {
  wanted: Set<string>;
  extra: Row[];
  vends: Map<string, VendRow[]>;
}

/** The vends of the sessions closed in the window, by session id. */
function windowVends(db: Database.Database, from: number, to: number): Map<string, VendRow[]> {
  const vends = new Map<string, VendRow[]>();
  const stmt = db.prepare(
    "SELECT session_id, item, price, outcome FROM vends WHERE session_id IN (SELECT id FROM sessions WHERE closed_at >= ? AND closed_at < ?) ORDER BY id",
  );
  for (const v of stmt.all(from, to) as VendRow[]) {
    const list = vends.get(v.session_id) ?? [];
    list.push(v);
    vends.set(v.session_id, list);
  }
  return vends;
}

/** The sessions of the listed order ids not already gathered, with their vends. */
function addOrderIds(
  db: Database.Database,
  orderIds: readonly string[],
  hasVends: boolean,
  g: Gathered,
): void {
  // Indexed by the UNIQUE order_id; one lookup per order id keeps every statement small.
  const one = db.prepare(ONE_SESSION);
  const vendsOf = !hasVends
    ? null
    : db.prepare("SELECT session_id, item, price, outcome FROM vends WHERE session_id = ? ORDER BY id");
  for (const orderId of new Set(orderIds)) {
    const r = one.get(orderId) as Row | undefined;
    if (r === undefined || g.wanted.has(r.id)) continue;
    g.wanted.add(r.id);
    g.extra.push(r);
    if (vendsOf !== null) g.vends.set(r.id, vendsOf.all(r.id) as VendRow[]);
  }
}

/** The sessions closed before the window with a refund done in it. */
function addRefundedEarlier(db: Database.Database, win: { start: number; end: number }, g: Gathered): void {
  const earlier = db
    .prepare(
      `SELECT DISTINCT s.order_id FROM intents i JOIN sessions s ON s.id = i.session_id
           WHERE i.op = 'refund' AND i.state = 'done' AND i.updated_at >= ? AND i.updated_at < ? AND s.closed_at < ?`,
    )
    .all(win.start, win.end, win.start) as { order_id: string }[];
  const one = db.prepare(ONE_SESSION);
  for (const { order_id } of earlier) {
    const r = one.get(order_id) as Row | undefined;
    if (r === undefined || g.wanted.has(r.id)) continue;
    g.wanted.add(r.id);
    g.extra.push(r);
  }
}

/** Each session's refunds done before the window and by its end. */
function refundTimes(
  db: Database.Database,
  win: { start: number; end: number },
  rows: readonly Row[],
): NonNullable<ExportResult["refunds"]> {
  const sums = db.prepare(
    `SELECT coalesce(sum(CASE WHEN updated_at < ? THEN amount END), 0) AS before,
                coalesce(sum(CASE WHEN updated_at < ? THEN amount END), 0) AS by
         FROM intents WHERE session_id = ? AND op = 'refund' AND state = 'done'`,
  );
  const refunds: NonNullable<ExportResult["refunds"]> = new Map();
  for (const r of rows) {
    const t = sums.get(win.start, win.end, r.id) as { before: number; by: number };
    refunds.set(r.id, { before: t.before, by: t.by });
  }
  return refunds;
}

/** One session row as the fleet's session data (validated), or why it is skipped. */
function exported(
  r: Row,
  fallback: string | null,
  vends: Map<string, VendRow[]>,
  members: Map<string, SessionMember>,
  out: ExportResult,
): void {
  const currency = r.currency ?? fallback;
  if (currency === null) {
    out.skipped.push({ orderId: r.order_id, why: "currency unknown (give --config FILE)" });
    return;
  }
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
    currency,
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

/**
 * Finished sessions closed in [from, to) (epoch ms; either open-ended), oldest first, in listed order ids
 * too when `orderIds` is given (issue 30: a later day's refund's session, whatever day it closed). Each
 * session's currency is its own (journal migration 7), else the journal's (`meta`), else `opts.currency`
 * (the config's); a session whose currency is known nowhere is skipped with why.
 */
export function exportSessions(path: string, opts: ExportOptions): ExportResult {
  const db = openReadOnly(path);
  try {
    if (!hasTable(db, "sessions")) return { sessions: [], skipped: [] };
    const fallback = metaValue(db, "currency") ?? opts.currency ?? null;
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
    const hasVends = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vends'").get();
    const g: Gathered = {
      wanted: new Set(rows.map((r) => r.id)),
      extra: [],
      vends:
        hasVends !== undefined && rows.length > 0
          ? windowVends(db, opts.from ?? 0, opts.to ?? Number.MAX_SAFE_INTEGER)
          : new Map(),
    };
    if (opts.orderIds !== undefined && opts.orderIds.length > 0)
      addOrderIds(db, opts.orderIds, hasVends !== undefined, g);
    const win = opts.refundsIn;
    if (win !== undefined) addRefundedEarlier(db, win, g);
    const members = planMembers(db, opts.from ?? 0, opts.to ?? Number.MAX_SAFE_INTEGER);
    const out: ExportResult = { sessions: [], skipped: [] };
    if (win !== undefined) out.refunds = refundTimes(db, win, rows.concat(g.extra));
    for (const r of rows.concat(g.extra)) exported(r, fallback, g.vends, members, out);
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
