/**
 * A unit whose board turns the PC/SC reader on (the Pi boards do) on a machine without pcscd (issue 34):
 * nfc-pcsc's constructor retried SCardEstablishContext forever, so `vendd run` hung as its peripherals
 * started, just after logging "unit in service". Now the real `vendd run` (this checkout's build) keeps
 * serving with the NFC reader degraded and the reason logged. PCSCLITE_CSOCK_NAME points libpcsclite (and the driver's check) at a path where
 * nothing listens, whatever this machine runs.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runScenario, startWorld, Unit, type World } from "../../src/chaos/index.js";
import { seededRandom } from "../../src/core/random.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

/** nfc-pcsc loads here (this machine has libpcsclite1), or there is nothing to show. */
const loads =
  spawnSync(process.execPath, ["-e", 'require("nfc-pcsc")'], { encoding: "utf8", timeout: 20_000 }).status ===
  0;

describe.skipIf(!HAVE_SOCAT || !loads)("vendd run with nfc.kind pcsc and no pcscd", () => {
  let world: World | null = null;
  afterAll(async () => {
    await world?.close();
  });

  it("keeps serving with the NFC reader degraded, saying pcscd is not running", {
    timeout: 90_000,
  }, async () => {
    requireBuiltCli();
    world = await startWorld(50);
    const unit = Unit.create(world, { driver: "v10", flow: "selection" });
    const config = JSON.parse(readFileSync(unit.files.configPath, "utf8")) as Record<string, unknown>;
    writeFileSync(
      unit.files.configPath,
      JSON.stringify({ ...config, nfc: { enabled: true, kind: "pcsc" } }),
      {
        mode: 0o600,
      },
    );
    const socket = join(unit.files.dir, "no-pcscd.comm");
    const daemon = await unit.start({ env: { PCSCLITE_CSOCK_NAME: socket }, readyTimeoutMs: 30_000 });
    expect(unit.inService).toBe(true);
    // The peripherals start once the engine runs, just after "unit in service": the old build hung there,
    // in service by its log but never answering again.
    const deadline = Date.now() + 20_000;
    while (!daemon.log.includes("pcscd is not running") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(daemon.log).toContain(`pcscd is not running (nothing listens on ${socket})`);
    expect(daemon.log).toMatch(/"state":"degraded"[^\n]*"msg":"nfc: reader state"/);
    // And it sells.
    const { records } = await runScenario(unit, { vends: 1, random: seededRandom(34), successRate: 1 });
    expect(records.map((r) => r.outcome)).toEqual(["success"]);
    await daemon.stop();
  });
});
