/**
 * When the journal refunded (issue 30). A sales row holds a session's refunds in all; the fleet's event log
 * keeps every report of the session, each stamped with when the unit wrote it (a refund after close is
 * reported again at its completion, src/journal/sqlite.ts). From that log: what a session had refunded when
 * a day range ended (`refundedBy`), and before it started (`refundedBefore`), so that a refund made after
 * the range is compared on its own day and a later day's refund of an earlier session is compared exactly.
 * Sessions of earlier days refunded within the range are found here too, with or without a report line.
 */
import type { Kysely } from "kysely";
import type { FleetDatabase } from "../db/schema.js";
import type { SaleRow } from "./match.js";
import { sessionReportsBefore, sessionReportsIn } from "./store.js";

interface State {
  seq: number;
  refunded: number;
}

function refundedOf(data: string): { sessionId: string; refunded: number } | null {
  try {
    const d = JSON.parse(data) as { sessionId?: unknown; refunded?: unknown };
    if (typeof d.sessionId !== "string" || typeof d.refunded !== "number") return null;
    return { sessionId: d.sessionId, refunded: d.refunded };
  } catch {
    return null;
  }
}

/** The latest refunded total of each (unit, session) reported in [start, end) (the `events_kind_at` index). */
async function reportedIn(
  db: Kysely<FleetDatabase>,
  start: number,
  end: number,
): Promise<Map<string, State>> {
  const rows = await sessionReportsIn(db, start, end);
  const out = new Map<string, State>();
  for (const r of rows) {
    const d = refundedOf(r.data);
    if (d === null) continue;
    const key = `${r.unit_id}|${d.sessionId}`;
    const seq = Number(r.seq);
    if ((out.get(key)?.seq ?? -1) < seq) out.set(key, { seq, refunded: d.refunded });
  }
  return out;
}

/** What a session had refunded before `start`: its latest report before then (0 when none). */
async function refundedBefore(db: Kysely<FleetDatabase>, s: SaleRow, start: number): Promise<number> {
  const rows = await sessionReportsBefore(db, s, start);
  for (const r of rows) {
    const d = refundedOf(r.data);
    if (d !== null && d.sessionId === s.session_id) return d.refunded;
  }
  return 0;
}

/**
 * Sets `refundedBy` on the range's sales and `refundedBefore`/`refundedBy` on `related` ones (sessions of
 * other days), and returns the sessions of earlier days the range's reports refunded that `related` lacks.
 */
export async function refundTimeline(
  db: Kysely<FleetDatabase>,
  range: { from: string; start: number; end: number },
  sales: SaleRow[],
  related: SaleRow[],
  loadSessions: (keys: readonly { unit: string; session: string }[]) => Promise<SaleRow[]>,
): Promise<SaleRow[]> {
  const inRange = await reportedIn(db, range.start, range.end);
  for (const s of sales) {
    const st = inRange.get(`${s.unit_id}|${s.session_id}`);
    if (st !== undefined) s.refundedBy = st.refunded;
  }
  const have = new Set(sales.concat(related).map((s) => `${s.unit_id}|${s.session_id}`));
  const missing: { unit: string; session: string }[] = [];
  for (const key of inRange.keys()) {
    if (have.has(key)) continue;
    const [unit = "", session = ""] = key.split("|");
    missing.push({ unit, session });
  }
  const extra = (await loadSessions(missing)).filter((s) => s.day < range.from);
  for (const s of related.concat(extra)) {
    const before = await refundedBefore(db, s, range.start);
    s.refundedBefore = before;
    s.refundedBy = inRange.get(`${s.unit_id}|${s.session_id}`)?.refunded ?? before;
  }
  return extra;
}
