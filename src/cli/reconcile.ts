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
import { dayStart, fetchReport, nextDay } from "../fleet/reconcile/run.js";
import { loadReportingSettings } from "../fleet/reconcile/settings.js";
import { exportSessions } from "../journal/export.js";
import { describeRefusal } from "../journal/problems.js";
import { ReportingClient } from "../payment/reporting/client.js";
import { parseOptionsOrExit } from "./cliArgs.js";
import type { CliIo } from "./config.js";
import { renderCsv, renderTable } from "./fleetReconcile.js";
import { journalSource, localZone } from "./journalExport.js";
import { RECONCILE_OPTIONS } from "./unitCommands.js";

const HELP = `usage: vendd reconcile [--journal FILE | --config FILE] --from DATE --to DATE [--reporting FILE]
                       [--format table|csv|json]

One unit without a fleet: matches the journal's finished sessions of the days (YYYY-MM-DD, local, both
included) with the payment service's transaction report, as \`vendd fleet reconcile\` does for a fleet.
Nothing is stored; exits 1 when anything does not reconcile.
  --journal FILE     the journal (read-only; default: the config's journal.path)
  --config FILE      the unit's config (unit id, currency, journal path)
  --reporting FILE   reporting settings, YAML or JSON (default $VENDD_REPORTING, else reporting.yaml)
  --format           table (default), csv (every line) or json
`;

const ORDER_ID = /^(.+)-(\d{10})-(\d+)$/;

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
  let sales: SaleRow[];
  let unit: string | null = src.unitId;
  try {
    const exported = exportSessions(src.path, {
      currency: src.currency,
      from: dayStart(from, tz),
      to: dayStart(nextDay(to), tz),
    });
    for (const s of exported.skipped)
      out.stderr.write(`vendd reconcile: session ${s.orderId} left out (${s.why})\n`);
    if (unit === null) {
      const first = exported.sessions.map((s) => ORDER_ID.exec(s.orderId)?.[1]).find((u) => u !== undefined);
      unit = first ?? null;
    }
    const u = unit ?? "";
    sales = exported.sessions.map((s) => ({
      unit_id: u,
      session_id: s.sessionId,
      order_id: s.orderId,
      payment_id: s.paymentId,
      driver: s.driver,
      captured: s.captured,
      refunded: s.refunded,
      closed_at: s.closedAt,
      day: dayOf(s.closedAt, tz),
    }));
  } catch (err) {
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    out.stderr.write(`vendd reconcile: ${refusal}`);
    return 1;
  }
  if (unit === null) {
    out.stderr.write("vendd reconcile: no unit id (give --config, or a journal with sessions)\n");
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
    const lines = report.lines.filter(
      (l) => own(l.paymentPointId) || (l.orderId !== null && ORDER_ID.exec(l.orderId)?.[1] === unit),
    );
    const transfers = report.transfers.filter((t) => own(t.paymentPointId));
    const result = reconcile({ from, to, sales, lines, transfers, timeZone: tz, points: settings.points });
    if (!settings.persistable && client.refreshes > 0)
      out.stderr.write(
        "vendd reconcile: the refresh token rotated and could not be stored (secrets from the environment)\n",
      );
    if (format === "json") out.stdout.write(`${JSON.stringify({ unit, ...result }, null, 2)}\n`);
    else if (format === "csv") out.stdout.write(renderCsv(result));
    else out.stdout.write(renderTable(result, null));
    return result.clean ? 0 : 1;
  } catch (e) {
    out.stderr.write(`vendd reconcile: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await client.close();
  }
}
