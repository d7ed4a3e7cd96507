/**
 * A reconciliation run (issue 17): the report for the day range is fetched on demand (never mirrored), the
 * fleet's sales rows for those days are read, matched (match.ts), and only the result is stored in
 * `recon_runs` / `recon_lines` with the time of the run.
 */
import type { Kysely } from "kysely";
import type { ReportingClient, ReportLine, TransferRef } from "../../payment/reporting/client.js";
import { dayOf, dayStart, nextDay } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";
import type { InvoicesDatabase } from "../invoices/index.js";
import { type BillingRow, type ReconLine, type ReconResult, reconcile, type SaleRow } from "./match.js";
import { refundTimeline } from "./refunds.js";
import type { FeeAgreement } from "./settings.js";

/** Days in the reporting time zone, shared by the features (context.ts). */
export { dayStart, nextDay } from "../context.js";

function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

export interface Report {
  lines: ReportLine[];
  /** Transfers dated in the range, each with its own contents (seed 002 transfer contents). */
  transfers: (TransferRef & { contents: ReportLine[] })[];
  /** Time spent fetching (ms), for the bench and the CLI's summary. */
  fetchMs: number;
}

/**
 * Fetches the report of [from, to] (days in `timeZone`) for the given payment points (default: all of the
 * merchant's): every line in the range, and the transfers dated from the day after `from` to the day after
 * `to` (a day's sales are transferred the next day).
 */
export async function fetchReport(
  client: ReportingClient,
  range: {
    from: string;
    to: string;
    timeZone: string;
    points?: readonly string[];
    /** Transfer contents interface: v1 (JSON) or v2 (default: JSON; `csv` for its CSV form). */
    contents?: { version: 1 | 2; format?: "json" | "csv" };
  },
): Promise<Report> {
  const started = performance.now();
  const points = range.points ?? (await client.paymentPoints()).map((p) => p.paymentPointId);
  const fromIso = isoSeconds(dayStart(range.from, range.timeZone));
  const toIso = isoSeconds(dayStart(nextDay(range.to), range.timeZone));
  const lines: ReportLine[] = [];
  const transfers: Report["transfers"] = [];
  const version = range.contents?.version ?? 2;
  const format = range.contents?.format ?? "json";
  for (const p of points) {
    for (const l of await client.transactions(p, fromIso, toIso)) lines.push(l);
    for (const t of await client.transferReferences(p, nextDay(range.from), nextDay(range.to)))
      transfers.push({
        ...t,
        contents: await client.transferContents(p, t.transferReference, version, format),
      });
  }
  return { lines, transfers, fetchMs: performance.now() - started };
}

const SALE_COLUMNS = [
  "unit_id",
  "session_id",
  "order_id",
  "payment_id",
  "driver",
  "captured",
  "refunded",
  "closed_at",
  "day",
  "currency",
] as const;

/** The fleet's sales rows of [from, to] (`sales.day`). */
export async function loadSales(db: Kysely<FleetDatabase>, from: string, to: string): Promise<SaleRow[]> {
  return db
    .selectFrom("sales")
    .select(SALE_COLUMNS)
    .where("day", ">=", from)
    .where("day", "<=", to)
    .execute();
}

/**
 * Sales outside [from, to] whose order id one of `lines` carries (issue 30: a refund or a second capture on
 * a later day is tied to its session whatever day that closed), read through the `sales_order` index in
 * chunks of 500 order ids.
 */
export async function loadRelated(
  db: Kysely<FleetDatabase>,
  from: string,
  to: string,
  lines: readonly ReportLine[],
): Promise<SaleRow[]> {
  const orders = new Set<string>();
  for (const l of lines) if (l.orderId !== null) orders.add(l.orderId);
  const list = [...orders];
  const out: SaleRow[] = [];
  for (let i = 0; i < list.length; i += 500) {
    const rows = await db
      .selectFrom("sales")
      .select(SALE_COLUMNS)
      .where("order_id", "in", list.slice(i, i + 500))
      .where((eb) => eb.or([eb("day", "<", from), eb("day", ">", to)]))
      .execute();
    for (const r of rows) out.push(r);
  }
  return out;
}

/** Sales rows of the given (unit, session) pairs. */
export async function loadSessions(
  db: Kysely<FleetDatabase>,
  keys: readonly { unit: string; session: string }[],
): Promise<SaleRow[]> {
  const out: SaleRow[] = [];
  for (const k of keys) {
    const r = await db
      .selectFrom("sales")
      .select(SALE_COLUMNS)
      .where("unit_id", "=", k.unit)
      .where("session_id", "=", k.session)
      .executeTakeFirst();
    if (r !== undefined) out.push(r);
  }
  return out;
}

/**
 * The payments the fleet asked for itself (issue 18) settled in [from, to] (days in `timeZone`): executed plan
 * charges, captured overages, issued plan refunds (by their last update) and paid invoices (by `paid_at`).
 */
export async function loadBilling(
  db: Kysely<FleetDatabase>,
  from: string,
  to: string,
  timeZone: string,
): Promise<BillingRow[]> {
  const start = dayStart(from, timeZone);
  const end = dayStart(nextDay(to), timeZone);
  const rows: BillingRow[] = [];
  const charges = await db
    .selectFrom("plan_charges")
    .select(["id", "member_id", "amount", "updated_at"])
    .where("state", "=", "executed")
    .where("updated_at", ">=", start)
    .where("updated_at", "<", end)
    .execute();
  for (const c of charges)
    rows.push({
      kind: "planCharge",
      orderId: c.id,
      ref: c.id,
      payer: c.member_id,
      day: dayOf(c.updated_at, timeZone),
      amount: c.amount,
    });
  const overages = await db
    .selectFrom("plan_overages")
    .select(["id", "member_id", "amount", "updated_at"])
    .where("state", "=", "captured")
    .where("updated_at", ">=", start)
    .where("updated_at", "<", end)
    .execute();
  for (const o of overages)
    rows.push({
      kind: "overage",
      orderId: o.id,
      ref: o.id,
      payer: o.member_id,
      day: dayOf(o.updated_at, timeZone),
      amount: o.amount,
    });
  const refunds = await db
    .selectFrom("plan_refunds")
    .select(["id", "member_id", "amount", "updated_at"])
    .where("state", "=", "issued")
    .where("updated_at", ">=", start)
    .where("updated_at", "<", end)
    .execute();
  for (const r of refunds)
    rows.push({
      kind: "planRefund",
      orderId: r.id,
      ref: r.id,
      payer: r.member_id,
      day: dayOf(r.updated_at, timeZone),
      // Requested amounts are always stored (a full refund stores what was left).
      amount: r.amount ?? 0,
    });
  // The invoice tables exist in every fleet database (migration 0003_invoices); only the static type widens.
  const invoices = await (db as unknown as Kysely<InvoicesDatabase>)
    .selectFrom("invoices")
    .select(["id", "company_id", "issuer_id", "number", "total", "paid_at"])
    .where("status", "=", "paid")
    .where("paid_at", ">=", start)
    .where("paid_at", "<", end)
    .execute();
  for (const i of invoices)
    rows.push({
      kind: "invoice",
      orderId: String(i.number),
      point: i.issuer_id,
      ref: i.id,
      payer: i.company_id,
      day: dayOf(i.paid_at ?? start, timeZone),
      amount: i.total,
    });
  return rows;
}

/** Stores a result; returns the run id. */
export async function saveRun(db: Kysely<FleetDatabase>, r: ReconResult, runAt: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const run = await tx
      .insertInto("recon_runs")
      .values({
        run_at: runAt,
        from_day: r.from,
        to_day: r.to,
        clean: r.clean ? 1 : 0,
        summary: JSON.stringify({ counts: r.counts, transfers: r.transfers, totals: r.totals }),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const runId = Number(run.id);
    for (let i = 0; i < r.lines.length; i += 500) {
      await tx
        .insertInto("recon_lines")
        .values(r.lines.slice(i, i + 500).map((l: ReconLine) => ({ run_id: runId, ...l })))
        .execute();
    }
    return runId;
  });
}

export interface RunOptions {
  from: string;
  to: string;
  timeZone: string;
  points?: ReadonlyMap<string, string>;
  /** Payment points to read (default: every point of the merchant). */
  paymentPoints?: readonly string[];
  runAt: number;
  /** The agreed transaction fee (reporting settings), if any. */
  transactionFee?: FeeAgreement | null;
  /** Transfer contents interface (default v2 JSON). */
  contents?: { version: 1 | 2; format?: "json" | "csv" };
}

/** Fetch, match, store. */
export async function runReconcile(
  db: Kysely<FleetDatabase>,
  client: ReportingClient,
  o: RunOptions,
): Promise<{ runId: number; result: ReconResult; fetchMs: number; matchMs: number }> {
  const report = await fetchReport(client, {
    from: o.from,
    to: o.to,
    timeZone: o.timeZone,
    ...(o.paymentPoints === undefined ? {} : { points: o.paymentPoints }),
    ...(o.contents === undefined ? {} : { contents: o.contents }),
  });
  const sales = await loadSales(db, o.from, o.to);
  const contentLines: ReportLine[] = [];
  for (const t of report.transfers) for (const c of t.contents) contentLines.push(c);
  const related = await loadRelated(db, o.from, o.to, report.lines.concat(contentLines));
  const extra = await refundTimeline(
    db,
    { from: o.from, start: dayStart(o.from, o.timeZone), end: dayStart(nextDay(o.to), o.timeZone) },
    sales,
    related,
    (keys) => loadSessions(db, keys),
  );
  for (const s of extra) related.push(s);
  const billing = await loadBilling(db, o.from, o.to, o.timeZone);
  const started = performance.now();
  const result = reconcile({
    from: o.from,
    to: o.to,
    sales,
    related,
    lines: report.lines,
    transfers: report.transfers,
    timeZone: o.timeZone,
    billing,
    transactionFee: o.transactionFee ?? null,
    ...(o.points === undefined ? {} : { points: o.points }),
  });
  const matchMs = performance.now() - started;
  const runId = await saveRun(db, result, o.runAt);
  return { runId, result, fetchMs: report.fetchMs, matchMs };
}
