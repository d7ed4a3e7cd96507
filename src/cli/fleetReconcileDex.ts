/**
 * `vendd fleet reconcile --dex` (issue 36): the three-way DEX reconciliation of a period from the fleet
 * database (no report is fetched: the service's side is what the settlement runs stored). Exit codes: 0 no
 * difference (honest gaps such as a counter reset are notes), 1 a difference or an unreadable database,
 * 2 usage error.
 */
import { existsSync } from "node:fs";
import { isDay } from "../core/days.js";
import { openFleetDb } from "../fleet/database.js";
import { isPostgresUrl, redactUrl } from "../fleet/db/open.js";
import { loadDexReport } from "../fleet/dex/load.js";
import { dexCsv, dexRows, dexTable } from "../fleet/dex/output.js";
import type { CliIo } from "./command.js";

export interface DexValues {
  from?: string | undefined;
  to?: string | undefined;
  format?: string | undefined;
  json?: boolean | undefined;
  db?: string | undefined;
  unit?: string | undefined;
}

export async function fleetReconcileDex(values: DexValues, help: string, out: CliIo): Promise<number> {
  const format = values.json === true ? "json" : (values.format ?? "table");
  const { from, to } = values;
  if (
    from === undefined ||
    to === undefined ||
    !isDay(from) ||
    !isDay(to) ||
    to < from ||
    !["table", "csv", "json"].includes(format)
  ) {
    out.stderr.write(
      `vendd fleet reconcile --dex: --from and --to must be days YYYY-MM-DD (from <= to); --format table|csv|json\n${help}`,
    );
    return 2;
  }
  const dbTarget = values.db ?? out.env.VENDD_FLEET_DB ?? "fleet.db";
  if (!isPostgresUrl(dbTarget) && !existsSync(dbTarget)) {
    out.stderr.write(`vendd fleet reconcile --dex: no fleet database at ${dbTarget} (--db FILE|URL)\n`);
    return 1;
  }
  let fleet: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    fleet = await openFleetDb(dbTarget);
  } catch (e) {
    const where = isPostgresUrl(dbTarget) ? redactUrl(dbTarget) : dbTarget;
    out.stderr.write(
      `vendd fleet reconcile --dex: cannot open the fleet database ${where}: ${(e as Error).message}\n`,
    );
    return 1;
  }
  try {
    const report = await loadDexReport(fleet.db, {
      from,
      to,
      timeZone: out.env.VENDD_FLEET_TZ ?? "UTC",
      ...(values.unit === undefined ? {} : { unit: values.unit }),
    });
    const rows = dexRows(report);
    if (format === "json") out.stdout.write(`${JSON.stringify({ ...report, rows }, null, 2)}\n`);
    else if (format === "csv") out.stdout.write(dexCsv(rows));
    else {
      out.stdout.write(dexTable(report, rows));
      if (report.units.length === 0)
        out.stderr.write(
          "vendd fleet reconcile --dex: no DEX reads in the period; enable dex in the units' config (docs/dex.md)\n",
        );
    }
    return report.clean ? 0 : 1;
  } catch (e) {
    out.stderr.write(`vendd fleet reconcile --dex: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await fleet.close();
  }
}
