/**
 * docs/dex.md's "A unit with DEX on the bench", run as written (issue 42): the machine is `vendd sim-vmc
 * --device … --dex-port …` as a process, typed into on its stdin; the unit is the built `vendd run` with
 * `vmc.driver: mdb-adapter` on the machine's MDB PTY and `dex` on its DEX PTY; the customer pays in the
 * emulator's app; the technician types `dex read` in `vendd console` over a PTY. A read asked for while the
 * machine still owes the vend's outcome says "a vend is in progress" (never an internal state message and
 * never a read that hangs); once the machine reports `success`, the read follows the vends.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeUnitFiles } from "../../src/chaos/unitFiles.js";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CANARY_PIN, Collected, PtyConsole, Supervised } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

const CLI = join(process.cwd(), "dist/src/cli/main.js");
const cleanups: (() => Promise<unknown>)[] = [];
let dir: string;
let pinHash: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-dex-bench-"));
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/** `vendd sim-vmc --device D --dex-port X`, typed into on stdin as the recipe says. */
function simVmc(mdb: string, dex: string): Collected & { type(line: string): void } {
  const child = spawn(process.execPath, [CLI, "sim-vmc", "--device", mdb, "--dex-port", dex], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const c = new Collected(child);
  cleanups.push(async () => {
    child.stdin?.end();
    child.kill("SIGTERM");
    await c.closed;
  });
  return Object.assign(c, { type: (line: string) => void child.stdin?.write(`${line}\n`) });
}

/** The customer checks in at the unit's beacon and accepts in the emulator's app until it is taken. */
async function pay(emu: Emulator, beaconId: string): Promise<void> {
  const app = emu.userSimulation;
  const deadline = Date.now() + 15_000;
  for (let i = 0; Date.now() < deadline; i++) {
    if (i % 10 === 0) app.checkin(beaconId, "+4520031801");
    if (app.accept(beaconId, "+4520031801").status === 200) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the payment was never accepted in the emulator's app");
}

describe.skipIf(!HAVE_SOCAT)("docs/dex.md: a unit with DEX on the bench, as written", () => {
  it("vend, pay, dex read during the vend (a vend is in progress), success, cash, dex read follows the vends", async () => {
    requireBuiltCli();
    const mdb = join(dir, "mdb");
    const dexPort = join(dir, "dex");
    // vendd sim-vmc --device /tmp/mdb --dex-port /tmp/dex
    const machine = simVmc(mdb, dexPort);
    await machine.waitFor(/dex: \S+/, 0, 20_000);
    // vendd emulator (in process here: the same emulator)
    const emu = await startEmulator({ pollDelayMs: 50 });
    cleanups.push(() => emu.close());
    // vendd run --config unit.yaml --secrets secrets.yaml, with vmc.driver mdb-adapter and dex enabled
    const files = writeUnitFiles(emu.info, { driver: "v10", flow: "selection" }, mdb);
    cleanups.push(async () => files.remove());
    const config = JSON.parse(readFileSync(files.configPath, "utf8")) as Record<string, unknown>;
    Object.assign(config, {
      currency: "EUR",
      dex: { enabled: true, device: dexPort, timeZone: "UTC", quietSeconds: 1, attempts: 2 },
      console: { pinHash },
    });
    writeFileSync(files.configPath, JSON.stringify(config), { mode: 0o600 });
    const daemon = new Supervised(
      ["run", "--config", files.configPath, "--secrets", files.secretsPath],
      join(files.dir, "daemon.pid"),
    );
    cleanups.push(() => daemon.stop());
    await daemon.waitRuns(1, "unit in service", 30_000);
    // its first start reads the machine (the baseline)
    await expect.poll(() => daemon.current.out.includes('"msg":"DEX read"'), { timeout: 30_000 }).toBe(true);

    const c = PtyConsole.start(join(files.dir, "control.sock"), 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);

    // Type `vend 11 1.50`, pay in the emulator's app, `wait-approval`
    machine.type("wait-enabled");
    machine.type("vend 11 1.50");
    await pay(emu, files.beaconId);
    const mark = machine.mark();
    machine.type("wait-approval");
    machine.type("status");
    await machine.waitFor(/approved/, mark, 20_000);
    // a read asked for now: the machine owes the vend's outcome
    const during = await c.line("dex read", /DEX read \S+ \(console\): failed[\s\S]*vendd> /, 20_000);
    expect(during).toContain("a vend is in progress");
    expect(during).not.toMatch(/cannot switch|in state/);

    // `success`, `cash 12 2.70`, then `dex read`: the counters follow the vends
    const m2 = machine.mark();
    machine.type("success");
    machine.type("cash 12 2.70");
    machine.type("status");
    // the vend ended at the machine: the reader is enabled again for the next customer
    await machine.waitFor(/reader enabled/, m2, 10_000);
    // and the unit has its outcome (the sale closed)
    await expect
      .poll(() => daemon.current.out.includes('"msg":"session finished"'), { timeout: 20_000 })
      .toBe(true);
    const after = await c
      .line("dex read", /DEX read \S+ \(console\): ok[\s\S]*cashless\s+1 vends, 1\.50[\s\S]*vendd> /, 40_000)
      .catch((err: unknown) => {
        throw new Error(`${String(err)}\nconsole:\n${c.out.slice(-1500)}\nunit:\n${daemon.all.slice(-3000)}`);
      });
    expect(after).toMatch(/cash\s+1 vends, 2\.70/);
    expect(after).not.toMatch(/cannot switch|in state/);
  }, 120_000);
});
