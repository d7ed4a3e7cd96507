/**
 * A reconciliation run (issue 17): the report for the day range is fetched on demand (never mirrored), the
 * fleet's sales rows for those days are read, matched (match.ts), and only the result is stored in
 * `recon_runs` / `recon_lines` with the time of the run.
 */
import type { Kysely } from "kysely";
import type { ReportingClient, ReportLine, TransferRef } from "../../payment/reporting/client.js";
import { dayStart, nextDay } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";
import { type ReconResult, reconcile, type SaleRow } from "./match.js";
import { refundTimeline } from "./refunds.js";
import type { FeeAgreement } from "./settings.js";

/** Days in the reporting time zone, shared by the features (context.ts). */
export { dayStart, nextDay } from "../context.js";

import { DAY_MS } from "../../core/days.js";
import { loadBilling, loadRelated, loadSales, loadSessions, saveRun } from "./store.js";

export { loadBilling, loadRelated, loadSales, loadSessions, saveRun };

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

/** How far back the report is read for an earlier session's payments (a second capture is found within). */
export const PAID_BEFORE_DAYS = 92;

/**
 * Sets `paidBefore` on the sessions of days before the range that the range's report lines pay again (issue
 * 42): the report of their payment points from the earliest such session's day (at most PAID_BEFORE_DAYS
 * back) to the range's start is read once, and their order ids' payments summed. Sessions not paid in the
 * range cost nothing.
 */
export async function addPaidBefore(
  client: ReportingClient,
  range: { from: string; timeZone: string },
  related: readonly SaleRow[],
  lines: readonly ReportLine[],
): Promise<void> {
  const paidNow = new Map<string, Set<string>>();
  for (const l of lines) {
    if (l.type !== "Payment" || l.orderId === null) continue;
    const points = paidNow.get(l.orderId) ?? new Set<string>();
    points.add(l.paymentPointId);
    paidNow.set(l.orderId, points);
  }
  const earlier = related.filter((s) => s.day < range.from && paidNow.has(s.order_id));
  if (earlier.length === 0) return;
  const end = dayStart(range.from, range.timeZone);
  const bound = end - PAID_BEFORE_DAYS * DAY_MS;
  const start = Math.max(bound, Math.min(...earlier.map((s) => dayStart(s.day, range.timeZone))));
  const points = new Set<string>();
  for (const s of earlier) for (const p of paidNow.get(s.order_id) ?? []) points.add(p);
  const paid = new Map<string, bigint>();
  for (const p of points)
    for (const l of await client.transactions(p, isoSeconds(start), isoSeconds(end)))
      if (l.type === "Payment" && l.orderId !== null)
        paid.set(l.orderId, (paid.get(l.orderId) ?? 0n) + BigInt(l.amount));
  for (const s of earlier) s.paidBefore = Number(paid.get(s.order_id) ?? 0n);
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
  await addPaidBefore(client, { from: o.from, timeZone: o.timeZone }, related, report.lines);
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
