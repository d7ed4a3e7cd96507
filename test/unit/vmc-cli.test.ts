import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createAdapterController } from "../../drivers/vmc/adapter/index.js";
import { simVmcCommand } from "../../src/cli/simVmc.js";
import { systemClock } from "../../src/core/clock.js";
import { EventLog, eventually, HAVE_SOCAT } from "../support/vmc.js";

describe.skipIf(!HAVE_SOCAT)("vendd sim-vmc", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-cli-vmc-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("makes a PTY at --device and plays a scripted selection-first vend against the driver", async () => {
    const device = join(dir, "ttyCLI");
    const script = join(dir, "vend.txt");
    writeFileSync(
      script,
      "# one vend\nwait-enabled 5000\nvend 2 1.50\nwait-approval 5000\nsuccess\nwait 300\nquit\n",
    );
    const run = simVmcCommand(["--device", device, "--script", script, "--quiet", "--ack-rate", "50"]);
    await eventually(() => existsSync(device), 5000, "PTY link");
    const ctrl = createAdapterController({
      path: device,
      currencyCode: "DKK",
      clock: systemClock,
      commandTimeoutMs: 2000,
    });
    const log = new EventLog();
    ctrl.onEvent((e) => log.push(e));
    try {
      await ctrl.open();
      expect(await log.waitType("vendRequested", 5000)).toEqual({
        type: "vendRequested",
        item: 2,
        price: 150,
      });
      await ctrl.approveVend(150);
      await log.waitType("sessionEnded", 5000);
      expect(log.types()).toEqual(["vendRequested", "vendSucceeded", "sessionEnded"]);
      expect(await run).toBe(0);
    } finally {
      await ctrl.close();
    }
  });

  it("attaches to an existing PTY pair end when --device is a tty", async () => {
    const a = join(dir, "ttyA");
    const b = join(dir, "ttyB");
    const pair = spawn("socat", [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], {
      stdio: "ignore",
    });
    const ctrl = createAdapterController({
      path: b,
      currencyCode: "EUR",
      clock: systemClock,
      commandTimeoutMs: 2000,
    });
    try {
      await eventually(() => existsSync(a) && existsSync(b), 5000, "PTY pair");
      const script = join(dir, "deny.txt");
      writeFileSync(script, "wait-enabled 5000\nvend 9 0.50\nwait-approval 5000\nwait 200\nstatus\nquit\n");
      const run = simVmcCommand(["--device", a, "--script", script, "--quiet"]);
      const log = new EventLog();
      ctrl.onEvent((e) => log.push(e));
      await ctrl.open();
      await log.waitType("vendRequested", 5000);
      await ctrl.denyVend();
      await log.waitType("sessionEnded", 5000);
      expect(await run).toBe(0);
    } finally {
      await ctrl.close();
      pair.kill();
    }
  });

  it("refuses unknown options with exit code 2", async () => {
    expect(await simVmcCommand(["--bogus"])).toBe(2);
  });
});
