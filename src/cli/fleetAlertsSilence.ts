/**
 * `vendd fleet alerts silence add|list|edit|end` and `vendd fleet alerts ack|unack ID` (issue 42): silences
 * and maintenance windows, and acknowledgements, written to the fleet database (the server may be running:
 * its next evaluation reads them). Times are shown in the fleet's time zone (from --config), naming it.
 * Exit 0 done; 1 the database cannot be opened, or nothing to do (no such silence or alert, or a refused
 * input, which changes nothing); 2 usage.
 */
import { parseArgs } from "node:util";
import { zonedTime } from "../core/days.js";
import { printable } from "../core/printable.js";
import type { Silence } from "../fleet/alerts/routing.js";
import { silenceState } from "../fleet/alerts/routing.js";
import { alertsDb } from "../fleet/alerts/schema.js";
import { createSilence, editSilence, endSilence, listSilences } from "../fleet/alerts/silenceStore.js";
import { acknowledge, unacknowledge } from "../fleet/alerts/store.js";
import { FleetConfigError, fleetConfigAdmin } from "../fleet/config.js";
import { openFleetDb } from "../fleet/database.js";
import { isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import { argsProblem } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_ALERTS_ACK_OPTIONS, FLEET_ALERTS_SILENCE_OPTIONS, FLEET_COMMANDS } from "./fleetCommands.js";
import { fleetDbTarget } from "./fleetUser.js";

const SILENCE_USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet alerts silence")))}
A silence matches alerts by --unit, --group and --rule (at least one; each one given must match). It
starts now, or at --starts (a maintenance window, with --maintenance), and ends at --ends or after --for.
TIME names its zone (2026-12-03T22:00+01:00, 2026-12-03T21:00Z); DURATION is 45s, 90m, 1.5h or 2d.
A change a silence matches is recorded but not sent; the silence expires by itself. See docs/alerts.md.
`;
const ACK_USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => /^fleet alerts (un)?ack/.test(c.words)))}
ID is the alert's id (vendd fleet alerts --json lists them). See docs/alerts.md.
`;

type Db = Awaited<ReturnType<typeof openFleetDb>>;

/** Opens the fleet database (--db, else the config's, else the default) and runs `f` on it. */
async function withDb(
  name: string,
  values: { db?: string; config?: string },
  f: (fdb: Db, timeZone: string | undefined) => Promise<number>,
): Promise<number> {
  let target = fleetDbTarget(values.db);
  let timeZone: string | undefined;
  if (values.config !== undefined) {
    try {
      const c = fleetConfigAdmin(values.config);
      timeZone = c.timeZone;
      if (values.db === undefined) target = c.db ?? target;
    } catch (e) {
      if (!(e instanceof FleetConfigError)) throw e;
      process.stderr.write(`vendd fleet alerts ${name}: ${e.message}\n`);
      return 2;
    }
  }
  let fdb: Db;
  try {
    fdb = await openFleetDb(target, { create: false });
  } catch {
    const where = isPostgresUrl(target) ? redactUrl(target) : target;
    process.stderr.write(
      `vendd fleet alerts ${name}: cannot open the fleet database ${where} (--db FILE|URL or --config FILE)\n`,
    );
    return 1;
  }
  try {
    return await f(fdb, timeZone);
  } finally {
    await fdb.close();
  }
}

const text = (v: string | undefined): v is string => v !== undefined && v.trim() !== "" && v.length <= 200;

function silenceLine(x: Silence, now: number, tz: string | undefined): string {
  const what = [
    x.unitId === null ? "" : `unit ${x.unitId}`,
    x.group === null ? "" : `group ${x.group}`,
    x.rule === null ? "" : `rule ${x.rule}`,
  ]
    .filter((s) => s !== "")
    .join(", ");
  const kind = x.kind === "maintenance" ? "maintenance window" : "silence";
  return `${x.id}  ${silenceState(x, now).padEnd(8)} ${kind}: ${printable(what, 200)}; ${zonedTime(x.startsAt, tz)} to ${zonedTime(x.endsAt, tz)}; by ${printable(x.createdBy, 100)}: ${printable(x.reason, 300)}${
    x.updatedBy === null ? "" : ` (changed by ${printable(x.updatedBy, 100)})`
  }`;
}

const json = (x: Silence) => ({
  ...x,
  startsAt: new Date(x.startsAt).toISOString(),
  endsAt: new Date(x.endsAt).toISOString(),
  createdAt: new Date(x.createdAt).toISOString(),
  updatedAt: x.updatedAt === null ? null : new Date(x.updatedAt).toISOString(),
});

export async function fleetAlertsSilenceCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{
      args: string[];
      options: typeof FLEET_ALERTS_SILENCE_OPTIONS;
      allowPositionals: true;
      strict: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: argv,
      options: FLEET_ALERTS_SILENCE_OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    process.stderr.write(`vendd fleet alerts silence: ${argsProblem(err)}\n${SILENCE_USAGE}`);
    return 2;
  }
  const { values: v, positionals } = parsed;
  const [verb, id, ...rest] = positionals;
  if (v.help === true) {
    process.stdout.write(SILENCE_USAGE);
    return 0;
  }
  const usage = (why: string): number => {
    process.stderr.write(`vendd fleet alerts silence: ${why}\n${SILENCE_USAGE}`);
    return 2;
  };
  if (rest.length > 0) return usage(`unexpected ${printable(rest.join(" "), 60)}`);
  const needsId = verb === "edit" || verb === "end";
  if (verb !== "add" && verb !== "list" && !needsId) return usage("say add, list, edit ID or end ID");
  if (needsId !== (id !== undefined))
    return usage(needsId ? `${verb} needs the silence's ID` : `${verb} takes no ID`);
  if ((verb === "add" || needsId) && !text(v.by)) return usage("--by NAME (who you are; 1-200 characters)");
  if (verb === "add" && !text(v.reason)) return usage("--reason TEXT (why; 1-200 characters)");
  const by = (v.by ?? "").trim();
  return withDb(`silence ${verb}`, v, async (fdb, tz) => {
    const db = alertsDb(fdb);
    const now = Date.now();
    const refused = (problems: readonly string[]) => {
      process.stderr.write(`vendd fleet alerts silence ${verb}: not saved: ${problems.join("; ")}\n`);
      return 1;
    };
    const shown = (x: Silence, what: string) => {
      process.stdout.write(
        v.json === true
          ? `${JSON.stringify({ silence: json(x) })}\n`
          : `${what}: ${silenceLine(x, now, tz)}\n`,
      );
      return 0;
    };
    if (verb === "list") {
      const xs = await listSilences(db, now, v.all === true ? "all" : "current");
      if (v.json === true) process.stdout.write(`${JSON.stringify({ silences: xs.map(json) })}\n`);
      else if (xs.length === 0)
        process.stdout.write(v.all === true ? "no silences\n" : "no current silences\n");
      else for (const x of xs) process.stdout.write(`${silenceLine(x, now, tz)}\n`);
      return 0;
    }
    if (verb === "end") {
      if (await endSilence(db, id ?? "", by, now)) {
        process.stdout.write(`silence ${id} ended\n`);
        return 0;
      }
      process.stderr.write(
        `vendd fleet alerts silence end: no current silence ${printable(id ?? "", 60)} (vendd fleet alerts silence list)\n`,
      );
      return 1;
    }
    const opt = (k: "starts" | "ends" | "for" | "reason") => (v[k] === undefined ? {} : { [k]: v[k] });
    if (verb === "edit") {
      const r = await editSilence(
        db,
        id ?? "",
        { ...opt("starts"), ...opt("ends"), ...opt("for"), ...opt("reason") },
        by,
        now,
      );
      return r.ok ? shown(r.silence, "changed") : refused(r.problems);
    }
    const r = await createSilence(
      db,
      {
        kind: v.maintenance === true ? "maintenance" : "silence",
        ...(v.unit === undefined ? {} : { unit: v.unit }),
        ...(v.group === undefined ? {} : { group: v.group }),
        ...(v.rule === undefined ? {} : { rule: v.rule }),
        ...opt("starts"),
        ...opt("ends"),
        ...opt("for"),
        ...opt("reason"),
      },
      by,
      now,
    );
    return r.ok ? shown(r.silence, "made") : refused(r.problems);
  });
}

/** `vendd fleet alerts ack ID --by NAME` and `unack`. */
export async function fleetAlertsAckCommand(kind: "ack" | "unack", argv: string[]): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{
      args: string[];
      options: typeof FLEET_ALERTS_ACK_OPTIONS;
      allowPositionals: true;
      strict: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: argv,
      options: FLEET_ALERTS_ACK_OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    process.stderr.write(`vendd fleet alerts ${kind}: ${argsProblem(err)}\n${ACK_USAGE}`);
    return 2;
  }
  const { values: v, positionals } = parsed;
  if (v.help === true) {
    process.stdout.write(ACK_USAGE);
    return 0;
  }
  const [id, ...rest] = positionals;
  if (id === undefined || rest.length > 0 || !text(v.by)) {
    process.stderr.write(
      `vendd fleet alerts ${kind}: the alert's ID and --by NAME (1-200 characters)\n${ACK_USAGE}`,
    );
    return 2;
  }
  const by = v.by.trim();
  return withDb(kind, v, async (fdb) => {
    const db = alertsDb(fdb);
    const done = await (kind === "ack" ? acknowledge : unacknowledge)(db, id, by, Date.now());
    if (done) {
      process.stdout.write(
        kind === "ack"
          ? `alert ${id} acknowledged by ${by}: no more re-notifications\n`
          : `alert ${id}: acknowledgement taken back by ${by}; it is re-notified again\n`,
      );
      return 0;
    }
    process.stderr.write(
      `vendd fleet alerts ${kind}: no ${kind === "ack" ? "open, unacknowledged" : "acknowledged, open"} alert ${printable(id, 60)} (vendd fleet alerts --open lists them)\n`,
    );
    return 1;
  });
}
