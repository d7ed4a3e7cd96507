import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startDexSimulator } from "../../drivers/dex/simulator/index.js";
import { socatAvailable, startVmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { emulatorV10Settings } from "../../src/demo/emulatorSettings.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { vendd } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-doctor-cli-"));
let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A config file for a unit on `board`, paying through the in-process emulator; `over` is merged on top. */
function config(board: string, over: Record<string, unknown> = {}): string {
  const path = join(dir, `vendd-${n++}.yaml`);
  const content = {
    unit: { id: "vm-doc", name: "Doctor unit" },
    board,
    journal: { path: join(dir, "journal.db") },
    payment: {
      driver: "v10",
      v10: emulatorV10Settings(emu.info),
    },
    ...over,
  };
  writeFileSync(path, stringify(content));
  return path;
}

const env = () => ({ VENDD_V10_CLIENT_SECRET: emu.info.v10.clientSecret });

interface Row {
  check: string;
  status: string;
  detail: string;
}

function rows(stdout: string): Row[] {
  const parsed: unknown = JSON.parse(stdout);
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !("checks" in parsed) ||
    !Array.isArray(parsed.checks)
  ) {
    throw new Error("no checks in the JSON output");
  }
  return parsed.checks as Row[];
}

describe("vendd doctor (built CLI)", () => {
  it("passes on the sim board: table with every check, exit 0", async () => {
    const r = await vendd(["doctor", "--config", config("sim")], { env: env(), timeoutMs: 30_000 });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^CHECK\s+STATUS\s+DETAIL$/);
    for (const check of ["config", "clock", "disk", "vmc", "display", "gpio", "ble", "nfc", "payment"]) {
      expect(lines.some((l) => new RegExp(`^${check}\\s+ok\\s`).test(l))).toBe(true);
    }
    expect(r.stdout).toMatch(/^journal\s+skip\s+no journal at/m);
    expect(r.stdout).toContain("all checks passed");
    expect(r.stdout).not.toContain(emu.info.v10.clientSecret);
  });

  it("the sim-pulse board opens the pulse output on the simulated GPIO (JSON)", async () => {
    const r = await vendd(["doctor", "--json", "--config", config("sim-pulse")], {
      env: env(),
      timeoutMs: 30_000,
    });
    expect(r.code).toBe(0);
    const vmc = rows(r.stdout).find((x) => x.check === "vmc");
    expect(vmc).toEqual({
      check: "vmc",
      status: "ok",
      detail: expect.stringContaining("pulse output ready (pin 17"),
      ms: expect.any(Number),
    });
  });

  it("a missing serial adapter fails with what to check, exit 1", async () => {
    const file = config("pi-usb", {
      vmc: { device: "/dev/does-not-exist" },
      display: { kind: "none" },
      gpio: { kind: "sim" },
      ble: { enabled: false },
      nfc: { enabled: false },
    });
    const r = await vendd(["doctor", "--json", "--config", file], { env: env(), timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    const byCheck = new Map(rows(r.stdout).map((x) => [x.check, x]));
    expect(byCheck.get("vmc")).toMatchObject({
      status: "fail",
      detail:
        "/dev/does-not-exist does not exist: is the USB adapter plugged in? List /dev/serial/by-id/ and set vmc.device to its link",
    });
    expect(byCheck.get("payment")?.status).toBe("ok");
  });

  // issue 36: the DEX port is checked with a handshake only; the machine counts no read and resets nothing.
  it.skipIf(!socatAvailable())(
    "a DEX port that answers the handshake over a real PTY passes; none fails",
    async () => {
      const sim = await startDexSimulator({ linkPath: join(dir, "dex-pty") });
      try {
        sim.machine.vend("11", "DA");
        const over = {
          display: { kind: "none" },
          gpio: { kind: "sim" },
          ble: { enabled: false },
          nfc: { enabled: false },
        };
        const ok = config("sim", { ...over, dex: { enabled: true, device: sim.devicePath } });
        const r = await vendd(["doctor", "--json", "--config", ok], { env: env(), timeoutMs: 30_000 });
        expect(rows(r.stdout).find((x) => x.check === "dex")).toMatchObject({
          status: "ok",
          detail: `machine SIM0000001 answered the DEX handshake on ${sim.devicePath} (unit as master)`,
        });
        expect(r.code).toBe(0);
        expect(sim.machine.reads).toBe(0);
        expect(sim.machine.totals().cashless).toBe(150);
        sim.vmd.faults.silent = true;
        const bad = await vendd(["doctor", "--json", "--config", ok], { env: env(), timeoutMs: 30_000 });
        expect(bad.code).toBe(1);
        expect(rows(bad.stdout).find((x) => x.check === "dex")?.detail).toContain("no DEX handshake on");
      } finally {
        await sim.close();
      }
    },
  );

  it.skipIf(!socatAvailable())("a cashless adapter that answers over a real PTY passes", async () => {
    const sim = await startVmcSimulator();
    try {
      const file = config("pi-usb", {
        vmc: { device: sim.devicePath },
        display: { kind: "none" },
        gpio: { kind: "sim" },
        ble: { enabled: false },
        nfc: { enabled: false },
      });
      const r = await vendd(["doctor", "--json", "--config", file], { env: env(), timeoutMs: 30_000 });
      expect(r.code).toBe(0);
      expect(rows(r.stdout).find((x) => x.check === "vmc")).toMatchObject({
        status: "ok",
        detail: `adapter on ${sim.devicePath} answered`,
      });
      expect(sim.commands.length).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });

  it("a display device that does not exist fails with what to check, exit 1", async () => {
    const file = config("sim", { display: { device: "/dev/does-not-exist" } });
    const r = await vendd(["doctor", "--config", file], { env: env(), timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^display\s+fail\s+\/dev\/does-not-exist does not exist: is the screen connected\? Check display.device/m,
    );
    expect(r.stdout).toContain("1 check failed");
  });

  it("an invalid config is one failed row naming every error; bad arguments exit 2", async () => {
    const file = config("sim", { vmc: { driver: "mdb-adapter" } });
    const r = await vendd(["doctor", "--config", file], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^config\s+fail\s+1 error\(s\) in .*: vmc\.device: required when vmc\.driver is mdb-adapter/m,
    );
    expect((await vendd(["doctor", "--verbose"])).code).toBe(2);
  });
});
