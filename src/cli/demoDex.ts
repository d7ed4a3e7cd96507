/**
 * `vendd demo --dex` (issue 36), the parts above the demo's layer: each unit reads its simulated machine's DEX
 * port through the daemon's own DexReads over the real DexReader (a socat PTY, the real DEX/UCS protocol), and
 * with `--fleet` the fleet's three-way report over the demo's period (the same code as `vendd fleet reconcile
 * --dex`). The demo runs no settlement reconciliation (each unit has an emulator of its own, and the fleet's
 * reporting link points at none of them), so the service's column is empty and says so.
 */
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import { DexReads } from "../daemon/dexReads.js";
import type { DemoDexStarter } from "../demo/dex.js";
import type { FleetDatabase } from "../fleet/db/schema.js";
import { loadDexReport } from "../fleet/dex/load.js";
import { dexRows, dexTable } from "../fleet/dex/output.js";

/** The demo unit's reads: DexReads as the daemon builds them, without the schedule (the demo reads twice). */
export function demoDexReads(clock: Clock, logger: Logger): DemoDexStarter {
  return (unit) => {
    const { dex } = unit.config;
    const device = dex.device;
    if (device === null) throw new Error("vendd demo --dex: the unit's config has no dex.device");
    const reads: DexReads = new DexReads({
      config: dex,
      clock,
      logger: logger.child({ component: "dex" }),
      store: { record: (read) => unit.journal.recordDexRead(read), last: () => unit.journal.dex().last() },
      async openReader() {
        const { DexReader } = await import("../../drivers/dex/reader.js");
        return DexReader.open({
          path: device,
          commId: dex.commId,
          clock,
          attempts: dex.attempts,
          onPush: (r) =>
            reads.recordPush(
              r.ok ? { ok: true, data: r.session.data } : { ok: false, error: r.error.message },
            ),
        });
      },
      engineIdle: unit.engineIdle,
      setBusy: unit.setBusy,
      onVmcActivity: (listener) => unit.vmc.onEvent((e) => listener(e)),
    });
    return { read: () => reads.read("schedule"), stop: () => reads.stop() };
  };
}

export interface DemoFleetDex {
  from: string;
  to: string;
  timeZone: string;
  units: {
    unit: string;
    /** Good reads of the unit in the fleet's `dex_reads` for the period (with its baseline). */
    reads: number;
    /** Summed over the unit's windows: the machine's cashless change (DA) and the unit's vends (journal). */
    machine: { count: number; value: number };
    unitSales: { count: number; value: number };
    clean: boolean;
  }[];
  /** Per class: windows' findings (a clean window is one `matched`), their vends and amount (minor units). */
  classes: Record<string, { rows: number; count: number; amount: number }>;
  currency: string | null;
  /** The payment service's column: why it is empty in the demo. */
  service: string;
  clean: boolean;
}

export const DEMO_NO_SERVICE =
  "not compared: the demo runs no settlement reconciliation (vendd fleet reconcile), so the fleet holds no service report lines";

/**
 * The fleet's three-way report of the demo's days (UTC), summed per unit and per class, and as the table
 * `vendd fleet reconcile --dex` prints (with the service's column explained).
 */
export async function demoFleetDex(
  db: Kysely<FleetDatabase>,
  from: string,
  to: string,
): Promise<{ dex: DemoFleetDex; table: string }> {
  const report = await loadDexReport(db, { from, to, timeZone: "UTC" });
  const rows = dexRows(report);
  const classes: DemoFleetDex["classes"] = {};
  for (const r of rows) {
    const c = classes[r.class] ?? { rows: 0, count: 0, amount: 0 };
    classes[r.class] = { rows: c.rows + 1, count: c.count + r.count, amount: c.amount + r.amount };
  }
  const units = report.units.map((u) => {
    const machine = { count: 0, value: 0 };
    const unitSales = { count: 0, value: 0 };
    for (const w of u.windows) {
      machine.count += w.dex?.count ?? 0;
      machine.value += w.dex?.value ?? 0;
      unitSales.count += w.journal.count;
      unitSales.value += w.journal.value;
    }
    return { unit: u.unit, reads: u.reads, machine, unitSales, clean: u.clean };
  });
  const serviceCompared = report.units.every((u) => u.uncoveredDays.length === 0);
  const service = serviceCompared ? "compared" : DEMO_NO_SERVICE;
  const dex = {
    from,
    to,
    timeZone: "UTC",
    units,
    classes,
    currency: report.units[0]?.currency ?? null,
    service,
    clean: report.clean && report.units.length > 0,
  };
  return { dex, table: `${dexTable(report, rows)}payment service: ${service}\n` };
}
