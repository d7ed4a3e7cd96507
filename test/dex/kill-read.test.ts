/**
 * A unit killed during a DEX read (issue 36 acceptance): the built `vendd run` (supervised: restarted when it
 * dies, as systemd does) reads its machine at start over a PTY where the machine sends its audit file slowly;
 * it is SIGKILLed in the middle of the transfer (blocks already sent, the read not complete). The restarted
 * daemon reads again (the missed slot), the read completes, and the fleet, fed by the unit's outbox over
 * signed HTTP, holds each completed read exactly once (the killed one was never journaled); a console read
 * after it is a second, distinct read. The machine's since-init counters are never reset by any of it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startVmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { writeUnitFiles } from "../../src/chaos/unitFiles.js";
import { enroll } from "../../src/cli/fleetEnroll.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { hashPin } from "../../src/core/pin.js";
import { startEmulator } from "../../src/emulator/index.js";
import { startFleetServer } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { CANARY_PIN, PtyConsole, Supervised } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

const cleanups: (() => Promise<unknown>)[] = [];
/** HH:MM (UTC) twelve hours from now. */
const farSlot = () => new Date(Date.now() + 12 * 3_600_000).toISOString().slice(11, 16);
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

describe.skipIf(!HAVE_SOCAT)("a unit killed during a DEX read", () => {
  it("restarts, reads again, and the fleet holds each read once; the machine's counters never reset", async () => {
    requireBuiltCli();
    const dir = mkdtempSync(join(tmpdir(), "vendd-dex-kill-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const server = await startFleetServer({
      db: join(dir, "fleet.db"),
      host: "127.0.0.1",
      port: 0,
      timeZone: "UTC",
      logger: pino({ level: "silent" }),
    });
    cleanups.push(() => server.close());
    const emu = await startEmulator({ pollDelayMs: 50 });
    cleanups.push(() => emu.close());
    const sim = await startVmcSimulator({ ackRate: 100, dex: { linkPath: join(dir, "dex") } });
    cleanups.push(() => sim.close());
    const dex = sim.dex;
    if (dex === null) throw new Error("no DEX port");
    dex.cashVend(11, 150);
    dex.otherCashlessVend(12, 270);
    dex.sim.vmd.faults.slowBlockMs = 150; // the audit file takes seconds: time to kill the unit in it
    const files = writeUnitFiles(emu.info, { driver: "v10", flow: "selection" }, sim.devicePath);
    cleanups.push(async () => files.remove());
    const key = generateUnitKey();
    const keyFile = join(dir, "fleet.key");
    writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
    if ((await enroll(server.url, key, "dex-kill", "kill test")) === "pending")
      expect(await approveUnit(server.ctx, "dex-kill", "manager")).toBe("done");
    const config = JSON.parse(readFileSync(files.configPath, "utf8")) as Record<string, unknown>;
    Object.assign(config, {
      unit: { id: "dex-kill", name: "DEX kill" },
      currency: "EUR",
      // one slot, twelve hours away: no scheduled read during the test, the missed one read at start
      dex: {
        enabled: true,
        device: join(dir, "dex"),
        schedule: [farSlot()],
        timeZone: "UTC",
        quietSeconds: 1,
        attempts: 2,
      },
      fleet: { url: server.url, keyFile, heartbeatSeconds: 5 },
      console: { pinHash: await hashPin(CANARY_PIN, 1024) },
    });
    writeFileSync(files.configPath, JSON.stringify(config), { mode: 0o600 });
    const daemon = new Supervised(
      ["run", "--config", files.configPath, "--secrets", files.secretsPath],
      join(dir, "daemon.pid"),
    );
    cleanups.push(() => daemon.stop());

    // the fresh unit reads at start; three blocks into the file, it is killed
    await expect.poll(() => dex.sim.vmd.stats.blocksSent, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    daemon.current.child.kill("SIGKILL");
    expect(dex.sim.machine.reads).toBe(0);
    dex.sim.vmd.faults.slowBlockMs = 0;
    await daemon.waitRuns(2, "unit in service", 30_000);
    await expect.poll(() => dex.sim.machine.reads, { timeout: 30_000 }).toBe(1);
    // the machine saw the killed session break off mid-file, and a whole one after it
    expect(dex.sim.vmd.stats.failed).toBeGreaterThanOrEqual(1);

    const fleetReads = () =>
      server.ctx.db
        .selectFrom("dex_reads")
        .select(["read_id", "trigger", "outcome"])
        .where("unit_id", "=", "dex-kill")
        .orderBy("at")
        .execute();
    await expect.poll(async () => (await fleetReads()).length, { timeout: 30_000 }).toBe(1);

    const c = PtyConsole.start(join(files.dir, "control.sock"), 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    await c.line("dex read", /DEX read \S+ \(console\): ok[\s\S]*vendd> /, 40_000);
    expect(dex.sim.machine.reads).toBe(2);
    await expect.poll(async () => (await fleetReads()).length, { timeout: 30_000 }).toBe(2);
    const rows = await fleetReads();
    expect(rows.map((r) => [r.trigger, r.outcome])).toEqual([
      ["schedule", "ok"],
      ["console", "ok"],
    ]);
    const db = new Database(files.journalPath, { readonly: true });
    try {
      const journal = db.prepare("SELECT read_id AS readId FROM dex_reads ORDER BY id").pluck().all();
      expect(journal).toEqual(rows.map((r) => r.read_id));
    } finally {
      db.close();
    }
    expect(dex.sim.machine.configRequests).toBe(0);
    expect(dex.sim.machine.totals()).toEqual({ vends: 2, value: 420, cashless: 270, cash: 150 });
  }, 150_000);
});
