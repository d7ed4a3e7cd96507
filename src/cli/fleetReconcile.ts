import { renderCommandUsage } from "./commandTable.js";
/**
 * `vendd fleet reconcile --from DATE --to DATE [--format table|csv|json] [--db FILE|URL] [--reporting FILE]`
 * (issue 17): fetches the transaction report for the days, matches it with the fleet's sales, stores the
 * result (recon_runs / recon_lines) and prints it. Exit codes: 0 everything reconciles, 1 something does not
 * (or the report or database could not be read), 2 usage error.
 */

import { systemClock } from "../core/clock.js";
import { rangeRefusal } from "../core/days.js";
import { printable } from "../core/printable.js";
import { FleetConfigError, fleetConfigAdmin } from "../fleet/config.js";
import { openFleetDb } from "../fleet/database.js";
import { runReconcile } from "../fleet/reconcile/run.js";
import { loadReportingSettings } from "../fleet/reconcile/settings.js";
import { ReportingClient } from "../payment/reporting/client.js";
import { parseOptionsOrExit } from "./cliArgs.js";
import type { CliIo } from "./command.js";
import { FLEET_COMMANDS, FLEET_RECONCILE_OPTIONS } from "./fleetCommands.js";
import { fleetReconcileDex } from "./fleetReconcileDex.js";
import { writeResult } from "./reconcileOutput.js";

const HELP = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet reconcile")))}
Matches every vend of the fleet's sales for the days (YYYY-MM-DD, both included) against the payment
service's transaction report (fetched now, never stored) and the transfers made for them, stores the result
and prints it. Exits 1 when anything does not reconcile.
  --db FILE|URL       the fleet database (default $VENDD_FLEET_DB, else fleet.db)
  --config FILE       the fleet config: its db, reporting.settingsFile and timeZone (flags win)
  --reporting FILE    reporting settings, YAML or JSON (default $VENDD_REPORTING, else reporting.yaml); the
                      client secret and refresh token come from its secretsFile or the environment
  --format            table (default): summary, transfers, lines that do not reconcile;
                      csv: every line; json: the whole result
  --dex               the three-way DEX reconciliation instead: per unit and window between two DEX reads,
                      the machine's cashless counters against the unit's vends and the payment service's
                      captures as the last settlement run stored them (docs/dex.md); exits 1 on a difference
  --unit ID           with --dex: one unit only
  --json              with --dex: the same as --format json
`;

/** Runs `vendd fleet reconcile` with `argv` the arguments after `reconcile`. */
export async function fleetReconcileCommand(argv: string[], io?: CliIo): Promise<number> {
  let out = io ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const values = parseOptionsOrExit("fleet reconcile", argv, FLEET_RECONCILE_OPTIONS, HELP, out);
  if (typeof values === "number") return values;
  if (values.config !== undefined) {
    // The fleet config's database, reporting settings and time zone; flags and the environment win.
    try {
      const c = fleetConfigAdmin(values.config);
      if (values.db === undefined && out.env.VENDD_FLEET_DB === undefined && c.db !== undefined)
        values.db = c.db;
      if (
        values.reporting === undefined &&
        out.env.VENDD_REPORTING === undefined &&
        c.reporting !== undefined
      )
        values.reporting = c.reporting;
      if (out.env.VENDD_FLEET_TZ === undefined && c.timeZone !== undefined)
        out = { ...out, env: { ...out.env, VENDD_FLEET_TZ: c.timeZone } };
    } catch (e) {
      if (!(e instanceof FleetConfigError)) throw e;
      out.stderr.write(`vendd fleet reconcile: ${e.message}\n`);
      return 2;
    }
  }
  if (values.dex === true) return fleetReconcileDex(values, HELP, out);
  const format = values.format ?? "table";
  if (values.from === undefined || values.to === undefined) {
    out.stderr.write(`vendd fleet reconcile: --from and --to are required (days YYYY-MM-DD)\n${HELP}`);
    return 2;
  }
  const refusal = ["table", "csv", "json"].includes(format)
    ? rangeRefusal(values.from, values.to)
    : `--format ${printable(format, 32)}: one of table, csv, json`;
  if (refusal !== null) {
    out.stderr.write(`vendd fleet reconcile: ${refusal}\n${HELP}`);
    return 2;
  }
  const dbTarget = values.db ?? out.env.VENDD_FLEET_DB ?? "fleet.db";
  const settingsPath = values.reporting ?? out.env.VENDD_REPORTING ?? "reporting.yaml";
  let settings: ReturnType<typeof loadReportingSettings>;
  try {
    settings = loadReportingSettings(settingsPath, out.env);
  } catch (e) {
    out.stderr.write(`vendd fleet reconcile: ${(e as Error).message}\n`);
    return 1;
  }
  let fleet: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    // Never created here: a mistyped path is refused, not made into an empty fleet.
    fleet = await openFleetDb(dbTarget, { create: false });
  } catch (e) {
    out.stderr.write(`vendd fleet reconcile: ${(e as Error).message}\n`);
    return 1;
  }
  const client = new ReportingClient({
    ...settings.credentials,
    onRefreshToken: (t) => settings.saveRefreshToken(t),
  });
  try {
    const run = await runReconcile(fleet.db, client, {
      from: values.from,
      to: values.to,
      timeZone: settings.timeZone ?? out.env.VENDD_FLEET_TZ ?? "UTC",
      points: settings.points,
      transactionFee: settings.transactionFee ?? null,
      ...(settings.paymentPoints === null ? {} : { paymentPoints: settings.paymentPoints }),
      runAt: systemClock.now(),
    });
    if (!settings.persistable && client.refreshes > 0)
      out.stderr.write(
        "vendd fleet reconcile: the refresh token rotated and the new one could not be stored (secrets from the environment); use secretsFile\n",
      );
    await writeResult(out.stdout, format, run.result, { runId: run.runId });
    return run.result.clean ? 0 : 1;
  } catch (e) {
    out.stderr.write(`vendd fleet reconcile: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await client.close();
    await fleet.close();
  }
}
