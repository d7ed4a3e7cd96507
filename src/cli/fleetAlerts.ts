/**
 * `vendd fleet alerts [--open] [--json] [--config FILE] [--db FILE|URL]`: the fleet's alerts (issue 37),
 * newest first, and the deliveries that failed or are being retried, read from the fleet database (the
 * server may be running). Exit 0; 1 when the database cannot be opened; 2 for a usage error.
 */
import { parseArgs } from "node:util";
import { printable } from "../core/printable.js";
import { alertsDb } from "../fleet/alerts/schema.js";
import { deliveryProblems, listAlerts } from "../fleet/alerts/store.js";
import { ALERTING_OFF } from "../fleet/alerts/views.js";
import { FleetConfigError, fleetConfigAlertsOn, fleetConfigDb } from "../fleet/config.js";
import { openFleetDb } from "../fleet/database.js";
import { isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import { argsProblem } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_ALERTS_OPTIONS, FLEET_COMMANDS } from "./fleetCommands.js";
import { fleetDbTarget } from "./fleetUser.js";

export const FLEET_ALERTS_USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet alerts")))}
The fleet's alerts, newest first: open, acknowledged and resolved (--open: open and acknowledged only),
then the deliveries (mail, webhooks) that failed or are being retried. --db: the fleet's SQLite file
(default ./fleet.db, or $VENDD_FLEET_DB) or a postgres:// URL; --config: take the database from the fleet
config. See docs/alerts.md.
`;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
/** One line of a table cell: control characters from unit data shown as spaces. */
const cell = (v: string): string => printable(v, 300);

export async function fleetAlertsCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === "silence") return (await import("./fleetAlertsSilence.js")).fleetAlertsSilenceCommand(rest);
  if (verb === "ack" || verb === "unack")
    return (await import("./fleetAlertsSilence.js")).fleetAlertsAckCommand(verb, rest);
  let values: { config?: string; db?: string; open?: boolean; json?: boolean; help?: boolean };
  try {
    const p = parseArgs({ args: argv, options: FLEET_ALERTS_OPTIONS, allowPositionals: false, strict: true });
    values = p.values;
  } catch (err) {
    process.stderr.write(`vendd fleet alerts: ${argsProblem(err)}\n${FLEET_ALERTS_USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(FLEET_ALERTS_USAGE);
    return 0;
  }
  let target = fleetDbTarget(values.db);
  let alertingOff = false;
  if (values.config !== undefined) {
    try {
      alertingOff = !fleetConfigAlertsOn(values.config);
      if (values.db === undefined) target = fleetConfigDb(values.config) ?? target;
    } catch (e) {
      if (!(e instanceof FleetConfigError)) throw e;
      process.stderr.write(`vendd fleet alerts: ${e.message}\n`);
      return 2;
    }
  }
  const where = isPostgresUrl(target) ? redactUrl(target) : target;
  let fdb: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    fdb = await openFleetDb(target);
  } catch {
    process.stderr.write(`vendd fleet alerts: cannot open the fleet database ${where}\n`);
    return 1;
  }
  try {
    const db = alertsDb(fdb);
    const alerts = await listAlerts(db, values.open === true ? { state: "active" } : {});
    const problems = await deliveryProblems(db);
    if (values.json === true) {
      const out = {
        ...(values.config === undefined ? {} : { alerting: alertingOff ? "off" : "on" }),
        alerts: alerts.map((a) => ({
          ...a,
          openedAt: iso(a.openedAt),
          resolvedAt: iso(a.resolvedAt),
          acknowledgedAt: iso(a.acknowledgedAt),
        })),
        deliveryProblems: problems.map((p) => ({ ...p, createdAt: iso(p.createdAt) })),
      };
      process.stdout.write(`${JSON.stringify(out)}\n`);
      return 0;
    }
    if (alertingOff)
      process.stdout.write(`${ALERTING_OFF.replace("this fleet's config", values.config ?? "")}\n\n`);
    if (alerts.length === 0) process.stdout.write("no alerts\n");
    for (const a of alerts)
      process.stdout.write(
        `${a.state.padEnd(12)} ${a.rule.padEnd(14)} ${cell(a.unitLabel === null ? a.unitId : `${a.unitId} (${a.unitLabel})`).padEnd(24)} ${iso(a.openedAt)}  ${cell(a.detail)}${
          a.acknowledgedBy === null ? "" : `  (acknowledged by ${cell(a.acknowledgedBy)})`
        }\n`,
      );
    if (problems.length > 0) {
      process.stdout.write(`\n${problems.length} delivery problem(s):\n`);
      for (const p of problems)
        process.stdout.write(
          `${p.state === "failed" ? "failed  " : "retrying"} ${p.channel.padEnd(20)} attempts ${p.attempts}  ${p.rule} ${cell(p.unitId)}  ${cell(p.lastError ?? "")}  change ${p.changeId}\n`,
        );
    }
    return 0;
  } finally {
    await fdb.close();
  }
}
