import { renderCommandUsage } from "./commandTable.js";
/**
 * `vendd reconcile [--journal FILE | --config FILE] --from DATE --to DATE [--reporting FILE]
 * [--format table|csv|json]` (issue 17): one unit without a fleet. Its journal's finished sessions (read-only,
 * as `vendd journal export` gives them) are matched with the payment service's report exactly as the fleet
 * matches its sales. Only the report lines of this unit are considered (order ids `<unit>-…`, or payment
 * points the settings' `points` give to it), and transfers only of payment points that belong to it alone
 * (a shared point's transfer covers other units' sales too). Nothing is stored. Exit codes: 0 everything
 * reconciles, 1 something does not (or a source could not be read), 2 usage error.
 */

import { existsSync } from "node:fs";
import { rangeRefusal } from "../core/days.js";
import { printable } from "../core/printable.js";
import { dayOf } from "../fleet/context.js";
import { reconcile, type SaleRow } from "../fleet/reconcile/match.js";
import { addPaidBefore, dayStart, fetchReport, nextDay } from "../fleet/reconcile/run.js";
import { loadReportingSettings } from "../fleet/reconcile/settings.js";
import { exportSessions, journalIdentity } from "../journal/export.js";
import { describeRefusal } from "../journal/problems.js";
import { ReportingClient, type ReportLine } from "../payment/reporting/client.js";
import { parseOptionsOrExit } from "./cliArgs.js";
import type { CliIo } from "./command.js";
import { journalSource, localZone } from "./journalExport.js";
import { writeResult } from "./reconcileOutput.js";
import { RECONCILE_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "reconcile"))}
One unit without a fleet: matches the journal's finished sessions of the days (YYYY-MM-DD, local, both
included) with the payment service's transaction report, as \`vendd fleet reconcile\` does for a fleet.
Nothing is stored; exits 1 when anything does not reconcile.
  --journal FILE     the journal (read-only; default: the config's journal.path)
  --config FILE      the unit's config (unit id, currency, journal path)
  --reporting FILE   reporting settings, YAML or JSON (default $VENDD_REPORTING, else reporting.yaml)
  --format           table (default), csv (every line) or json
`;

const ORDER_ID = /^(.+)-(\d{10})-(\d+)$/;

/**
 * The journal's finished sessions of the days, and those outside them whose order id a report line carries
 * (a later day's refund); null after printing why not.
 */
function readSales(
  path: string,
  o: { unit: string; from: string; to: string; tz: string; currency: string | null; orderIds: string[] },
  out: CliIo,
): { sales: SaleRow[]; related: SaleRow[] } | null {
  try {
    const start = dayStart(o.from, o.tz);
    const end = dayStart(nextDay(o.to), o.tz);
    const exported = exportSessions(path, {
      currency: o.currency,
      from: start,
      to: end,
      orderIds: o.orderIds,
      refundsIn: { start, end },
    });
    for (const s of exported.skipped)
      out.stderr.write(`vendd reconcile: session ${s.orderId} left out (${s.why})\n`);
    const sales: SaleRow[] = [];
    const related: SaleRow[] = [];
    for (const s of exported.sessions) {
      const row: SaleRow = {
        unit_id: o.unit,
        session_id: s.sessionId,
        order_id: s.orderId,
        payment_id: s.paymentId,
        driver: s.driver,
        captured: s.captured,
        refunded: s.refunded,
        closed_at: s.closedAt,
        day: dayOf(s.closedAt, o.tz),
        currency: s.currency,
      };
      const inRange = s.closedAt >= start && s.closedAt < end;
      const refunds = exported.refunds?.get(s.sessionId);
      if (refunds !== undefined) {
        row.refundedBy = refunds.by;
        if (!inRange) row.refundedBefore = refunds.before;
      }
      (inRange ? sales : related).push(row);
    }
    return { sales, related };
  } catch (err) {
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    out.stderr.write(`vendd reconcile: ${refusal}`);
    return null;
  }
}

export async function reconcileCommand(argv: string[], io?: CliIo): Promise<number> {
  const out = io ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const values = parseOptionsOrExit("reconcile", argv, RECONCILE_OPTIONS, HELP, out);
  if (typeof values === "number") return values;
  const format = values.format ?? "table";
  const { from, to } = values;
  if (from === undefined || to === undefined) {
    out.stderr.write(`vendd reconcile: --from and --to are required (days YYYY-MM-DD)\n${HELP}`);
    return 2;
  }
  const refusal = ["table", "csv", "json"].includes(format)
    ? rangeRefusal(from, to)
    : `--format ${printable(format, 32)}: one of table, csv, json`;
  if (refusal !== null) {
    out.stderr.write(`vendd reconcile: ${refusal}\n${HELP}`);
    return 2;
  }
  const src = journalSource(values, out, "vendd reconcile");
  if (src === null) return 1;
  if (!existsSync(src.path)) {
    out.stderr.write(`vendd reconcile: no journal at ${src.path}\n`);
    return 1;
  }
  let settings: ReturnType<typeof loadReportingSettings>;
  try {
    settings = loadReportingSettings(
      values.reporting ?? out.env.VENDD_REPORTING ?? "reporting.yaml",
      out.env,
    );
  } catch (e) {
    out.stderr.write(`vendd reconcile: ${(e as Error).message}\n`);
    return 1;
  }
  const tz = settings.timeZone ?? localZone();
  let identity: ReturnType<typeof journalIdentity>;
  try {
    identity = journalIdentity(src.path);
  } catch (err) {
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    out.stderr.write(`vendd reconcile: ${refusal}`);
    return 1;
  }
  // The config's unit when given, else the journal's own (issue 30: a day without sessions still has one).
  const unit = src.unitId ?? identity.unitId;
  if (unit === null) {
    out.stderr.write(
      `vendd reconcile: the journal ${src.path} names no unit (no sessions, older than this vendd): give --config FILE\n`,
    );
    return 1;
  }
  const client = new ReportingClient({
    ...settings.credentials,
    onRefreshToken: (t) => settings.saveRefreshToken(t),
  });
  try {
    const report = await fetchReport(client, {
      from,
      to,
      timeZone: tz,
      ...(settings.paymentPoints === null ? {} : { points: settings.paymentPoints }),
    });
    const own = (point: string) => settings.points.get(point) === unit;
    const mine = (l: ReportLine) =>
      own(l.paymentPointId) || (l.orderId !== null && ORDER_ID.exec(l.orderId)?.[1] === unit);
    const lines = report.lines.filter(mine);
    const transfers = report.transfers.filter((t) => own(t.paymentPointId));
    const orderIds: string[] = [];
    for (const l of lines) if (l.orderId !== null) orderIds.push(l.orderId);
    for (const t of transfers) for (const c of t.contents) if (c.orderId !== null) orderIds.push(c.orderId);
    const read = readSales(src.path, { unit, from, to, tz, currency: src.currency, orderIds }, out);
    if (read === null) return 1;
    await addPaidBefore(client, { from, timeZone: tz }, read.related, lines);
    const result = reconcile({
      from,
      to,
      sales: read.sales,
      related: read.related,
      lines,
      transfers,
      timeZone: tz,
      points: settings.points,
      transactionFee: settings.transactionFee ?? null,
    });
    if (!settings.persistable && client.refreshes > 0)
      out.stderr.write(
        "vendd reconcile: the refresh token rotated and could not be stored (secrets from the environment)\n",
      );
    await writeResult(out.stdout, format, result, { unit });
    return result.clean ? 0 : 1;
  } catch (e) {
    out.stderr.write(`vendd reconcile: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await client.close();
  }
}
