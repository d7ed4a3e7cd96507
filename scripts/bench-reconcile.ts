/**
 * Reconciliation bench (issue 17 acceptance; `npm run bench -- reconcile`, or `node
 * dist/scripts/bench-reconcile.js` after `npm run build`): a day of 5,000 vends across 20 units (both payment
 * interfaces, refunds, partial captures) in the in-process emulator's ledger and the matching sales rows in a
 * fleet database (SQLite, in memory), then:
 * 1. the emulator's paging: the day's report (every line of the payment point, pages of 1000, and the
 *    transfer references) fetched over HTTP on 127.0.0.1 by the reporting client → ms (both sides share the
 *    event loop);
 * 2. matching those 5,000 vends with the report (pure, in memory) → ms, target < 2,000;
 * 3. storing the result (recon_runs / recon_lines) → ms;
 * 4. the whole run (`runReconcile`: fetch, read the sales, match, store) minus the paging → ms, < 2,000.
 */
import { startEmulator } from "../src/emulator/index.js";
import { openFleetDb } from "../src/fleet/database.js";
import { reconcile } from "../src/fleet/reconcile/match.js";
import { fetchReport, loadSales, runReconcile, saveRun } from "../src/fleet/reconcile/run.js";
import { ReportingClient } from "../src/payment/reporting/client.js";
import { type BenchFigure, runFiguresWhenMain } from "./benchFigure.js";
import { consentRefreshToken, emulatorEndpoints, insertSales, seedDay } from "./reconcileDay.js";

const DAY = "2026-11-24";
const VENDS = 5000;

const r1 = (v: number): number => Math.round(v * 10) / 10;

export async function benchReconcile(): Promise<BenchFigure[]> {
  const emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse(`${DAY}T00:00:00Z`) });
  const fleet = await openFleetDb(":memory:");
  let client: ReportingClient | null = null;
  try {
    const day = seedDay(emu, { vends: VENDS, units: 20 });
    emu.reporting.advanceToCutoff();
    await insertSales(fleet.db, day.rows);
    client = new ReportingClient({
      ...emulatorEndpoints(emu),
      clientId: emu.info.reporting.clientId,
      clientSecret: emu.info.reporting.clientSecret,
      refreshToken: await consentRefreshToken(emu),
    });
    // Warm-up: the first report also reads the ledger into the emulator's books.
    await fetchReport(client, { from: DAY, to: DAY, timeZone: "UTC" });

    const report = await fetchReport(client, { from: DAY, to: DAY, timeZone: "UTC" });
    const sales = await loadSales(fleet.db, DAY, DAY);
    let started = performance.now();
    const result = reconcile({
      from: DAY,
      to: DAY,
      sales,
      lines: report.lines,
      transfers: report.transfers,
      timeZone: "UTC",
    });
    const matchMs = performance.now() - started;
    if (!result.clean || result.counts.matched !== VENDS)
      throw new Error(`the bench day does not reconcile: ${JSON.stringify(result.counts)}`);
    started = performance.now();
    await saveRun(fleet.db, result, Date.now());
    const storeMs = performance.now() - started;

    started = performance.now();
    const run = await runReconcile(fleet.db, client, {
      from: DAY,
      to: DAY,
      timeZone: "UTC",
      runAt: Date.now(),
    });
    const wholeMs = performance.now() - started;
    const beyondPaging = wholeMs - run.fetchMs;
    return [
      {
        name: "reconcile.emulatorPaging",
        figure: r1(report.fetchMs),
        unit: `ms (${report.lines.length} lines)`,
        target: "-",
        pass: true,
      },
      {
        name: "reconcile.match5000",
        figure: r1(matchMs),
        unit: "ms",
        target: "< 2000 ms",
        pass: matchMs < 2000,
      },
      { name: "reconcile.store", figure: r1(storeMs), unit: "ms", target: "-", pass: true },
      {
        name: "reconcile.runBeyondPaging",
        figure: r1(beyondPaging),
        unit: "ms",
        target: "< 2000 ms",
        pass: beyondPaging < 2000,
      },
    ];
  } finally {
    await client?.close();
    await fleet.close();
    await emu.close();
  }
}

runFiguresWhenMain(import.meta.url, benchReconcile);
