/**
 * Issue 36 defect: the console's `service in` during a DEX read recomputed the out-of-service reason without
 * the read's, so the cashless device was enabled on the MDB side while the machine's DEX port was in use.
 * The built `vendd run` reads a silent machine (its ENQs unanswered: the read runs for seconds); the
 * technician takes the unit out and back in service over the console's PTY; the unit stays out of service
 * ("Reading machine audit") until the read ends, and only then comes back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startDexSimulator } from "../../drivers/dex/simulator/index.js";
import { hashPin } from "../../src/core/pin.js";
import { startEmulator } from "../../src/emulator/index.js";
import { CANARY_PIN, CANARY_SECRET, PtyConsole, Supervised, writeUnit } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** The daemon's log messages (JSON lines) in order, with their reason when they carry one. */
function messages(out: string): string[] {
  const list: string[] = [];
  for (const line of out.split("\n")) {
    try {
      const o = JSON.parse(line) as { msg?: unknown; reason?: unknown };
      if (typeof o.msg === "string")
        list.push(typeof o.reason === "string" ? `${o.msg}: ${o.reason}` : o.msg);
    } catch {
      // not a log line
    }
  }
  return list;
}

describe.skipIf(!HAVE_SOCAT)("service in during a DEX read", () => {
  it("keeps the unit out of service until the read ends", async () => {
    requireBuiltCli();
    const dir = mkdtempSync(join(tmpdir(), "vendd-dex-service-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const sim = await startDexSimulator({ linkPath: join(dir, "dex") });
    cleanups.push(() => sim.close());
    sim.vmd.faults.silent = true;
    const emu = await startEmulator({
      pollDelayMs: 50,
      seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
    });
    cleanups.push(() => emu.close());
    // three session attempts with backoff against a silent machine: the read runs for about ten seconds
    const files = writeUnit(dir, emu, pinHash, [
      "dex:",
      "  enabled: true",
      `  device: ${sim.devicePath}`,
      "  quietSeconds: 1",
      "  attempts: 3",
    ]);
    const daemon = new Supervised(
      ["run", "--config", files.config, "--secrets", files.secrets],
      join(dir, "daemon.pid"),
    );
    cleanups.push(() => daemon.stop());
    // a fresh unit reads at start (its baseline): the read is running once the machine ignores an ENQ
    await daemon.waitRuns(1, "DEX read missed");
    await expect.poll(() => sim.vmd.stats.enqIgnored, { timeout: 20_000 }).toBeGreaterThan(0);
    const c = PtyConsole.start(join(dir, "control.sock"), 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    await c.line("service out Restocking", /vendd> /);
    await c.line("service in", /vendd> /);
    await expect
      .poll(() => messages(daemon.current.out).includes("DEX read"), { timeout: 30_000 })
      .toBe(true);
    const log = messages(daemon.current.out);
    const read = log.indexOf("DEX read");
    const out = log.lastIndexOf("out of service: Restocking");
    expect(out).toBeGreaterThan(-1);
    // the console's request was handled while the read ran (else this test proves nothing)
    expect(out).toBeLessThan(read);
    // after "service in" the unit stayed out of service for the read, and came back only when the read
    // ended (its "back in service" is logged just before the read's own line); on the old code "service in"
    // brought it back at once
    expect(log.slice(out + 1, read)).toEqual(["out of service: Reading machine audit", "back in service"]);
  }, 90_000);
});
