/**
 * The DEX three-way reconciliation end to end over the real seams (issue 36): two units, each a built
 * `vendd run` daemon with its own payment-service emulator, talking MDB to its simulated machine over a socat
 * PTY and reading that machine's DEX port over a second PTY (`startVmcSimulator({ dex })`, the machine of
 * `vendd sim-vmc --dex-port`). Each unit reads at start (its baseline), vends a simulated day over MDB (the
 * customers pay in the emulator's app; the machine also sells for cash), reads again from the technician
 * console (`dex read` over a PTY), and sends its outbox to a fleet server over signed HTTP. The emulator's
 * captures are settled into the fleet (a reconciliation run), and `vendd fleet reconcile --dex` (a real
 * process) reports clean. Then, one at a time and each made at the machine: a vend the machine counted but the
 * unit did not, a captured payment the machine did not count, a cash shortfall: each appears in its class with
 * its amount. The in-process day of test/fleet/dex-threeway.test.ts is the fast twin of this test.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVmcSimulator, type VmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { type ActorContext, selectionVend } from "../../src/chaos/actors.js";
import { type UnitFiles, writeUnitFiles } from "../../src/chaos/unitFiles.js";
import { enroll } from "../../src/cli/fleetEnroll.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { reconcile } from "../../src/fleet/reconcile/match.js";
import { saveRun } from "../../src/fleet/reconcile/run.js";
import { type RunningFleetServer, startFleetServer } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import type { ReportLine } from "../../src/payment/reporting/client.js";
import { CANARY_PIN, PtyConsole, Supervised } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

const run = promisify(execFile);
const DIFFERENCES = new Set(["machineNotUnit", "capturedNoVend", "unitNotService", "cashShortfall"]);

interface E2eUnit {
  id: string;
  emu: Emulator;
  sim: VmcSimulator;
  files: UnitFiles;
  daemon: Supervised;
  console: PtyConsole | null;
  actor: ActorContext;
}

const cleanups: (() => Promise<unknown>)[] = [];
/** HH:MM (UTC) twelve hours from now. */
const farSlot = () => new Date(Date.now() + 12 * 3_600_000).toISOString().slice(11, 16);
let dir: string;
let pinHash: string;
let server: RunningFleetServer;
const units: E2eUnit[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-dex-e2e-"));
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/** A unit: its emulator, its machine (MDB and DEX PTYs), its key enrolled and approved, its daemon in service. */
async function startUnit(id: string): Promise<E2eUnit> {
  const emu = await startEmulator({ pollDelayMs: 50 });
  cleanups.push(() => emu.close());
  const udir = mkdtempSync(join(dir, `${id}-`));
  const sim = await startVmcSimulator({ ackRate: 100, dex: { linkPath: join(udir, "dex") } });
  cleanups.push(() => sim.close());
  const files = writeUnitFiles(emu.info, { driver: "v10", flow: "selection" }, sim.devicePath);
  cleanups.push(async () => files.remove());
  const key = generateUnitKey();
  const keyFile = join(udir, "fleet.key");
  writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
  if ((await enroll(server.url, key, id, `e2e ${id}`)) === "pending")
    expect(await approveUnit(server.ctx, id, "manager")).toBe("done");
  const config = JSON.parse(readFileSync(files.configPath, "utf8")) as Record<string, unknown>;
  Object.assign(config, {
    unit: { id, name: `DEX e2e ${id}` },
    currency: "EUR",
    // one slot, twelve hours away: no scheduled read during the test, the missed one read at start
    dex: {
      enabled: true,
      device: join(udir, "dex"),
      schedule: [farSlot()],
      timeZone: "UTC",
      quietSeconds: 1,
      attempts: 2,
    },
    fleet: { url: server.url, keyFile, heartbeatSeconds: 5 },
    console: { pinHash },
  });
  writeFileSync(files.configPath, JSON.stringify(config), { mode: 0o600 });
  const daemon = new Supervised(
    ["run", "--config", files.configPath, "--secrets", files.secretsPath],
    join(udir, "daemon.pid"),
  );
  cleanups.push(() => daemon.stop());
  await daemon.waitRuns(1, "unit in service", 30_000);
  const actor: ActorContext = {
    emu,
    sim,
    beaconId: files.beaconId,
    phone: "+4520031801",
    payWithinMs: 8000,
    decideWithinMs: 8000,
    random: () => 0.5,
  };
  return { id, emu, sim, files, daemon, console: null, actor };
}

const machineReads = (u: E2eUnit) => u.sim.dex?.sim.machine.reads ?? -1;

/** `dex read` in the unit's technician console (logged in once). */
async function consoleRead(u: E2eUnit): Promise<void> {
  if (u.console === null) {
    const c = PtyConsole.start(join(u.files.dir, "control.sock"), 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    u.console = c;
  }
  const before = machineReads(u);
  await u.console.line("dex read", /DEX read \S+ \(console\): ok[\s\S]*vendd> /, 40_000);
  expect(machineReads(u)).toBe(before + 1);
}

/** A cashless vend through the unit over MDB: the customer pays in the app, the machine delivers. */
async function cardVend(u: E2eUnit, item: number, price: number): Promise<void> {
  const finished = () => u.daemon.current.out.split('"msg":"session finished"').length;
  const before = finished();
  const r = await selectionVend(u.actor, item, price, 1);
  expect(r.outcome, u.daemon.current.out.slice(-3000)).toBe("success");
  // the machine's VEND SUCCESS read by the daemon too: a `dex read` typed before that says a vend is in progress
  await expect.poll(finished, { timeout: 20_000 }).toBeGreaterThan(before);
}

/** Waits until the fleet holds `reads` DEX reads and `sales` sales of the unit (its outbox drained). */
async function drained(u: E2eUnit, reads: number, sales: number): Promise<void> {
  const count = async (table: "dex_reads" | "sales") =>
    Number(
      (
        await server.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as("n"))
          .where("unit_id", "=", u.id)
          .executeTakeFirst()
      )?.n ?? 0,
    );
  await expect
    .poll(async () => [await count("dex_reads"), await count("sales")], { timeout: 30_000 })
    .toEqual([reads, sales]);
}

/** The settlement run: every capture and refund the emulators recorded, as the service's report lists them. */
async function settle(day: string): Promise<void> {
  const lines: ReportLine[] = units.flatMap((u) =>
    u.emu
      .ledger()
      .filter((e) => e.kind === "captured" || e.kind === "refunded")
      .map((e) => ({
        paymentPointId: "pp-1",
        type: e.kind === "captured" ? "Payment" : "Refund",
        amount: e.kind === "captured" ? e.amount : -e.amount,
        currencyCode: e.currency,
        timestamp: new Date(e.at).toISOString(),
        at: e.at,
        paymentTransactionId: `tx-${e.id}`,
        orderId: e.orderId,
        transferReference: null,
      })),
  );
  const sales = await server.ctx.db.selectFrom("sales").selectAll().execute();
  const result = reconcile({ from: day, to: day, sales, lines, transfers: [], timeZone: "UTC" });
  await saveRun(server.ctx.db, result, Date.now());
}

/** `vendd fleet reconcile --dex` as a real process: exit code and the CSV's rows that are differences. */
async function reconcileDex(day: string): Promise<{ code: number; differences: string[][]; out: string }> {
  const args = ["dist/src/cli/main.js", "fleet", "reconcile", "--dex", "--from", day, "--to", day];
  const r = await run(process.execPath, [...args, "--db", join(dir, "fleet.db"), "--format", "csv"], {
    env: { ...process.env, VENDD_FLEET_TZ: "UTC" },
  }).then(
    (x) => ({ code: 0, out: x.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
  );
  const rows = r.out
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.split(","));
  const differences = rows
    .filter((f) => DIFFERENCES.has(f[5] ?? ""))
    .map((f) => [f[0] ?? "", f[5] ?? "", f[6] ?? "", f[7] ?? "", f[8] ?? ""]);
  return { ...r, differences };
}

describe.skipIf(!HAVE_SOCAT)(
  "DEX three-way end to end: daemons over MDB and DEX PTYs, a fleet server",
  () => {
    it("a clean simulated day, then each machine-side fault in its class with its amount", async () => {
      requireBuiltCli();
      server = await startFleetServer({
        db: join(dir, "fleet.db"),
        host: "127.0.0.1",
        port: 0,
        timeZone: "UTC",
        logger: pino({ level: "silent" }),
      });
      cleanups.push(() => server.close());
      for (const id of ["dex-e2e-1", "dex-e2e-2"]) units.push(await startUnit(id));
      // a fresh unit reads at its first start: the baseline
      for (const u of units) await expect.poll(() => machineReads(u), { timeout: 30_000 }).toBe(1);
      // journaled (so the unit is back in service) and on the fleet
      for (const u of units) await drained(u, 1, 0);

      // the simulated day: cashless vends through each unit over MDB, cash vends the machine makes itself
      const day = [
        [11, 150],
        [12, 270],
        [13, 200],
        [11, 150],
      ] as const;
      for (const [item, price] of day) for (const u of units) await cardVend(u, item, price);
      for (const u of units) {
        u.sim.dex?.cashVend(21, 125);
        u.sim.dex?.cashVend(12, 270);
      }
      for (const u of units) await consoleRead(u);
      for (const u of units) await drained(u, 2, day.length);
      const today = new Date().toISOString().slice(0, 10);
      await settle(today);
      const clean = await reconcileDex(today);
      expect(clean.differences).toEqual([]);
      expect(clean.code, clean.out).toBe(0);
      for (const u of units) expect(clean.out).toContain(`${u.id},`);

      const [u] = units;
      if (u === undefined || u.sim.dex === null) throw new Error("no unit");
      const found: string[][] = [];
      // 1. another device's cashless vend: the machine counted it, the unit never saw it
      u.sim.dex.otherCashlessVend(13, 200);
      await consoleRead(u);
      await drained(u, 3, day.length);
      found.push([u.id, "machineNotUnit", "1", "200", "EUR"]);
      let r = await reconcileDex(today);
      expect(r.code).toBe(1);
      expect(r.differences).toEqual(found);

      // 2. a vend captured through the unit that the machine did not count
      u.sim.dex.faults.uncounted = 1;
      await cardVend(u, 12, 270);
      await consoleRead(u);
      await drained(u, 4, day.length + 1);
      await settle(today);
      found.push([u.id, "capturedNoVend", "1", "270", "EUR"]);
      r = await reconcileDex(today);
      expect(r.differences).toEqual(found);

      // 3. a cash vend of 2.00 with 1.30 kept: a shortfall of 0.70
      u.sim.dex.cashVend(13, 200, 130);
      await consoleRead(u);
      await drained(u, 5, day.length + 1);
      found.push([u.id, "cashShortfall", "0", "70", "EUR"]);
      r = await reconcileDex(today);
      expect(r.differences).toEqual(found);
      // no read reset the machine's since-init counters
      expect(u.sim.dex.sim.machine.totals()).toEqual({ vends: 8, value: 1565, cashless: 970, cash: 595 });
    }, 240_000);
  },
);
