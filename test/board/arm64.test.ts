/**
 * An emulated Pi (issue 34; docs/board.md, "Emulated Pi"): the arm64 .deb of `npm run release -- --arch
 * arm64` installed into an arm64 root directory (dpkg --root), and the installed release run by the official
 * arm64 Node under qemu-aarch64 (binfmt_misc): `vendd --version`; the release's i2c-bus built for arm64 and
 * loading; `vendd run` drawing its check-in screen into a stand-in framebuffer (issue 46), the image
 * decoded by jsQR; the release's nfc-pcsc against Debian's
 * real arm64 libpcsclite1 (missing, then loading with no pcscd, then the arm64 pcscd under qemu with no
 * reader), as `vendd doctor` reports it; `vendd demo --vends 3 --json` consistent;
 * a `vendd run` daemon against the emulator (x86, in this process) and the simulated machine on a socat
 * PTY, selling, SIGKILLed by itself mid-vend (fault point) and restarted, the money checked against the
 * emulator's ledger (each vend charged once, nothing left reserved); then a release bundle made from the
 * arm64 tarball applied to that unit by its own `vendd bundle apply`, the health gate passing.
 * Skipped, saying why, outside CI when qemu, binfmt_misc, the release or the arm64 .debs of
 * scripts/arm64-debs.sh are missing; in CI (.ci/run fetches and builds them first) a missing piece fails.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fakeFramebuffer, readFramebuffer } from "../../drivers/display/framebuffer.test-support.js";
import { decodeRgba } from "../../drivers/display/qr.test-support.js";
import type { VendRecord } from "../../src/chaos/actors.js";
import { finishAndCheck, runScenario, startWorld, Unit, type World } from "../../src/chaos/index.js";
import { hashPin } from "../../src/core/pin.js";
import { seededRandom } from "../../src/core/random.js";
import { emulatorV10Settings } from "../../src/demo/emulatorSettings.js";
import { startEmulator } from "../../src/emulator/index.js";
import { makeKey, signedBundle } from "../../src/update/update.test-support.js";
import {
  ARM_NODE,
  armDeb,
  debPath,
  dpkg,
  dpkgMissing,
  emptyRoot,
  IN_CI,
  PCSCD_DEBS,
  QEMU_ENV,
  qemuMissing,
  rootLibraryPath,
  startArmPcscd,
  tarballPath,
  unpackArmDebs,
  VERSION,
} from "../support/board.js";
import { CANARY_PIN, CANARY_SECRET, Collected, writeUnit } from "../support/console.js";
import { expectQuietAndConsistent, HAVE_SOCAT } from "../support/daemon.js";

const DEB = debPath("vendd", "arm64");
const TARBALL = tarballPath("arm64");
const why =
  qemuMissing() ??
  dpkgMissing() ??
  (HAVE_SOCAT ? null : "socat is missing") ??
  (existsSync(DEB) && existsSync(TARBALL) && existsSync(ARM_NODE)
    ? null
    : `${DEB}, its tarball or ${ARM_NODE} is missing: run \`npm run release -- --arch arm64\` first`) ??
  (["libpcsclite1", ...PCSCD_DEBS].every((p) => armDeb(p) !== null)
    ? null
    : "Debian's arm64 libpcsclite1 and pcscd are missing: run `bash scripts/arm64-debs.sh`");
if (why !== null && IN_CI) throw new Error(`board-arm64: ${why}`);
if (why !== null) console.warn(`emulated Pi tests skipped: ${why}`);

/** The emulated Pi's beaconId: its check-in link is what the framebuffer's QR code must decode to. */
const PI_BEACON = "340000000000046";

/** qemu-aarch64 runs about as fast as a Pi Zero 2 W: generous waits. */
const READY_MS = 90_000;

describe.skipIf(why !== null)("emulated Pi: the arm64 package under qemu-aarch64", () => {
  let root = "";
  let world: World | null = null;
  afterAll(async () => {
    await world?.close();
    if (root !== "") rmSync(root, { recursive: true, force: true });
  });
  const main = () => join(root, "opt/vendd/current/dist/src/cli/main.js");
  const arm = (args: string[], timeout = 120_000) =>
    spawnSync(ARM_NODE, [main(), ...args], {
      encoding: "utf8",
      timeout,
      env: { ...process.env, ...QEMU_ENV },
    });

  it("installs into an arm64 root; `vendd --version` runs on the arm64 node", { timeout: 180_000 }, () => {
    root = emptyRoot("vendd-pi-root-", "arm64");
    const r = dpkg(root, ["-i", DEB]);
    expect(r.status, r.out).toBe(0);
    expect(spawnSync("file", ["-L", ARM_NODE], { encoding: "utf8" }).stdout).toContain("ARM aarch64");
    const native = join(root, "usr/lib/vendd/node_modules/better-sqlite3/build/Release/better_sqlite3.node");
    expect(spawnSync("file", [native], { encoding: "utf8" }).stdout).toContain("ARM aarch64");
    const v = arm(["--version"]);
    expect(v.stderr).toBe("");
    expect(v.stdout).toBe(`vendd ${VERSION}\n`);
  });

  it("the package's i2c-bus (the OLED displays) is built for arm64 and loads on the arm64 node", {
    timeout: 180_000,
  }, () => {
    const modules = join(root, "usr/lib/vendd/node_modules");
    const native = join(modules, "i2c-bus/build/Release/i2c.node");
    expect(spawnSync("file", [native], { encoding: "utf8" }).stdout).toContain("ARM aarch64");
    // Loaded, and writing to a bus this machine does not have (opened at the first transfer): the
    // module's own ENOENT for /dev/i2c-250, not a load error.
    const r = spawnSync(
      ARM_NODE,
      [
        "-e",
        `require(${JSON.stringify(join(modules, "i2c-bus"))}).openPromisified(250).then((b) => b.i2cWrite(0x3c, 1, Buffer.from([0]))).then(() => console.log("written"), (e) => console.log("error " + e.code))`,
      ],
      { encoding: "utf8", timeout: 120_000, env: { ...process.env, ...QEMU_ENV } },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("error ENOENT\n");
  });

  it("`vendd run` draws its check-in screen into a stand-in framebuffer; the image decodes", {
    timeout: 300_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-pi-fb-"));
    const emu = await startEmulator({
      pollDelayMs: 50,
      seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
    });
    // An SPI panel's geometry as fbtft reports it (240x240, RGB565), in a file and a fake sysfs directory.
    const fb = fakeFramebuffer(240, 240, 16);
    let daemon: Collected | null = null;
    try {
      const files = writeUnit(dir, emu, await hashPin(CANARY_PIN, 1024), ["engine: { flow: checkin }"], {
        display: `{ kind: framebuffer, device: ${fb.device}, sysfs: ${fb.sysfs} }`,
        beaconId: PI_BEACON,
      });
      daemon = new Collected(
        spawn(ARM_NODE, [main(), "run", "--config", files.config, "--secrets", files.secrets], {
          env: { ...process.env, ...QEMU_ENV },
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      await daemon.waitFor("unit in service", 0, READY_MS);
      const link = `servicepos://pos?id=${PI_BEACON}&source=qr`;
      await expect
        .poll(() => decodeRgba(readFramebuffer(fb), fb.width, fb.height), { timeout: 60_000 })
        .toBe(link);
      expect(daemon.out).not.toMatch(/"level":50/);
    } finally {
      await daemon?.stop();
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(join(fb.device, ".."), { recursive: true, force: true });
    }
  });

  it("nfc-pcsc from the package against Debian's arm64 libpcsclite1: missing, no pcscd, pcscd without a reader", {
    timeout: 400_000,
  }, async () => {
    const emu = await startEmulator({ port: 0, host: "127.0.0.1" });
    const dir = mkdtempSync(join(tmpdir(), "vendd-pi-nfc-"));
    const hadRun = existsSync("/run/pcscd");
    let pcscd: ChildProcess | null = null;
    try {
      const config = join(dir, "vendd.yaml");
      const unit = { id: "pi-nfc", name: "Pi NFC" };
      const payment = { driver: "v10", v10: emulatorV10Settings(emu.info) };
      const nfc = { enabled: true, kind: "pcsc" };
      writeFileSync(
        config,
        JSON.stringify({ unit, board: "sim", journal: { path: join(dir, "j.db") }, payment, nfc }),
      );
      // Asynchronous: the emulator answers the payment row from this process meanwhile.
      const nfcRow = async (socket: string) => {
        const r = await runArm(
          [main(), "doctor", "--json", "--config", config],
          {
            LD_LIBRARY_PATH: rootLibraryPath(root),
            PCSCLITE_CSOCK_NAME: socket,
            VENDD_V10_CLIENT_SECRET: emu.info.v10.clientSecret,
          },
          120_000,
        );
        expect(r.stderr).not.toMatch(/undefined symbol|dlopen|Segmentation/);
        const checks = (
          JSON.parse(r.stdout) as {
            checks: Array<{ check: string; status: string; detail: string; ms: number }>;
          }
        ).checks;
        // Every other row passes on the sim board: the nfc row alone tells the story.
        expect(checks.filter((c) => c.status === "fail").map((c) => c.check)).toEqual(["nfc"]);
        return checks.find((c) => c.check === "nfc");
      };
      const none = join(dir, "none.comm");
      // The package alone (pcscd, which Recommends names, not installed): the missing library is named.
      expect((await nfcRow(none))?.detail).toBe(
        "module not available: libpcsclite.so.1 is missing (apt-get install pcscd libccid)",
      );
      // Debian's arm64 libpcsclite1 in the root, as the board's pcscd brings it: the release's module links
      // against it and loads; without pcscd the station is degraded, saying so, at once (no hang, no crash).
      unpackArmDebs(root, ["libpcsclite1"]);
      const pcsc = join(root, "usr/lib/vendd/node_modules/@pokusew/pcsclite/build/Release/pcsclite.node");
      expect(spawnSync("readelf", ["-d", pcsc], { encoding: "utf8" }).stdout).toContain(
        "Shared library: [libpcsclite.so.1]",
      );
      const noPcscd = await nfcRow(none);
      expect(noPcscd?.detail).toBe(
        `pcscd is not running (nothing listens on ${none}): apt-get install pcscd libccid; systemctl enable --now pcscd.socket`,
      );
      // At once: the row does not wait out its 5 s for a reader (190 ms measured under qemu).
      expect(noPcscd?.ms).toBeLessThan(5000);
      // The board's arm64 pcscd under qemu, socket-activated on a path of this test: a PC/SC context is
      // established, and with no reader attached the row says so.
      unpackArmDebs(root, PCSCD_DEBS);
      const socket = join(dir, "pcscd.comm");
      mkdirSync(join(dir, "reader.conf.d"));
      const daemon = startArmPcscd(root, socket, join(dir, "reader.conf.d"));
      pcscd = daemon;
      let log = "";
      daemon.stderr?.on("data", (d: Buffer) => (log += d.toString()));
      daemon.stdout?.on("data", (d: Buffer) => (log += d.toString()));
      expect((await nfcRow(socket))?.detail, log).toBe(
        "no reader found: is the USB reader plugged in? (pcsc_scan lists readers)",
      );
      expect(daemon.exitCode, log).toBeNull();
    } finally {
      if (pcscd !== null && pcscd.exitCode === null) {
        const gone = new Promise((r) => pcscd?.once("exit", r));
        pcscd.kill("SIGTERM");
        await gone;
      }
      // pcscd writes its pid file under /run/pcscd even when socket-activated: not left behind here.
      if (!hadRun) rmSync("/run/pcscd", { recursive: true, force: true });
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("`vendd demo --vends 3 --json` is consistent", { timeout: 300_000 }, () => {
    const r = arm(["demo", "--vends", "3", "--json"], 280_000);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
    expect(summary).toMatchObject({ vends: 3, captured: 3, consistent: true });
  });

  it("an x86-64 build run on the board says so, not 'Check the storage'", { timeout: 180_000 }, () => {
    const r = spawnSync(ARM_NODE, [resolve("dist/src/cli/main.js"), "demo", "--vends", "1"], {
      encoding: "utf8",
      timeout: 170_000,
      env: { ...process.env, ...QEMU_ENV },
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      "wrong build (better_sqlite3.node is built for x86-64; install the release for this board)",
    );
    expect(r.stderr).not.toMatch(/storage|SD card/);
  });

  it("`vendd run` sells over a PTY, survives a SIGKILL mid-vend, and a release bundle passes its health gate", {
    timeout: 600_000,
  }, async () => {
    world = await startWorld(50);
    const unit = Unit.create(world, { driver: "v10", flow: "selection" });
    unit.launchDefaults = { command: [ARM_NODE, main()], env: QEMU_ENV, readyTimeoutMs: READY_MS };
    const random = seededRandom(34);
    const records: VendRecord[] = [];

    await unit.start();
    records.push(...(await runScenario(unit, { vends: 3, random, successRate: 1 })).records);
    await expectQuietAndConsistent(unit, records);
    await unit.daemon?.stop();

    // Killed by itself between recording the vend and settling the payment; restarted, it recovers.
    const armed = unit.launch({ env: { VENDD_FAULT_POINT: "vend.recorded" } });
    const killed = armed.whenExited();
    let fired = false;
    void killed.then((e) => {
      fired = e.signal === "SIGKILL";
    });
    const scenario = runScenario(unit, {
      vends: 2,
      random,
      firstIndex: 10,
      successRate: 1,
      until: () => fired,
    });
    expect((await killed).signal).toBe("SIGKILL");
    unit.kills++;
    await unit.start();
    records.push(...(await scenario).records);
    records.push(...(await runScenario(unit, { vends: 2, random, firstIndex: 20, successRate: 1 })).records);
    await expectQuietAndConsistent(unit, records);
    const report = await finishAndCheck(unit, records);
    expect(report.problems).toEqual([]);
    expect(report.unresolved).toBe(0);
    // Each vend charged once, nothing left reserved at the service.
    const ledger = unit.ledger();
    const captured = ledger.filter((e) => e.kind === "captured").map((e) => e.id);
    expect(new Set(captured).size, "a payment captured twice").toBe(captured.length);
    const delivered = records.filter((r) => r.outcome === "success" || r.outcome === "undispensed");
    expect(captured.length).toBe(delivered.length);
    const ended = new Set(ledger.filter((e) => e.kind !== "reserved").map((e) => e.id));
    const stillReserved = ledger.filter((e) => e.kind === "reserved" && !ended.has(e.id));
    expect(stillReserved, "payments left reserved").toEqual([]);

    await applyReleaseBundle(unit, root);

    // This machine's x86-64 build on the board: doctor names the module's CPU and the next step.
    const doctor = spawnSync(
      ARM_NODE,
      [
        resolve("dist/src/cli/main.js"),
        "doctor",
        "--config",
        unit.files.configPath,
        "--secrets",
        unit.files.secretsPath,
      ],
      { encoding: "utf8", timeout: 120_000, env: { ...process.env, ...QEMU_ENV } },
    );
    expect(doctor.stdout).toMatch(
      /native modules\s+fail\s+better_sqlite3\.node is built for x86-64; install the release for this board/,
    );
  });
});

/** Runs `args` on the arm64 node under qemu without blocking this process; killed after `timeoutMs`. */
function runArm(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(ARM_NODE, args, { env: { ...process.env, ...QEMU_ENV, ...env } });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => {
      clearTimeout(timer);
      done({ status, stdout, stderr });
    });
  });
}

/**
 * Gives the unit an `updates` section trusting a new key, then applies a bundle carrying the arm64 tarball
 * with the unit's own `vendd bundle apply`: the restart command asks this test to restart the daemon (from
 * /opt/vendd/current, now the new release), and the health gate must pass.
 */
async function applyReleaseBundle(unit: Unit, root: string): Promise<void> {
  const key = await makeKey("pi");
  const dir = unit.files.dir;
  const restarts = join(dir, "restart-requests");
  writeFileSync(restarts, "");
  const config = JSON.parse(readFileSync(unit.files.configPath, "utf8")) as Record<string, unknown>;
  // The unit's name is identity: the release bundle carries it unchanged (src/config/identity.ts).
  const withUpdates = () => ({
    ...config,
    unit: { id: "chaos-1", name: "Pi unit" },
    updates: {
      publicKeys: [key.line],
      fleet: "fleet-a",
      stateDir: join(dir, "updates"),
      releaseRoot: join(root, "opt/vendd"),
      inbox: join(dir, "inbox"),
      restartCommand: [
        process.execPath,
        "-e",
        `require("fs").appendFileSync(${JSON.stringify(restarts)}, "r\\n")`,
      ],
      health: { holdMs: 3000, timeoutMs: READY_MS, pollMs: 250 },
    },
  });
  writeFileSync(unit.files.configPath, JSON.stringify(withUpdates(), null, 2), { mode: 0o600 });
  await unit.start();
  const bundle = join(dir, "release.vbundle");
  writeFileSync(
    bundle,
    signedBundle([key], {
      version: 2,
      targets: ["chaos-1"],
      configText: `${JSON.stringify(withUpdates(), null, 2)}\n`,
      release: readFileSync(tarballPath("arm64")),
    }),
  );
  const applying = new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(
      ARM_NODE,
      [
        join(root, "opt/vendd/current/dist/src/cli/main.js"),
        "bundle",
        "apply",
        bundle,
        "--config",
        unit.files.configPath,
        "--json",
      ],
      {
        env: { ...process.env, ...QEMU_ENV },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => done({ status, stdout, stderr }));
  });
  // The restart command's effect: the daemon restarts from the swapped release.
  const deadline = Date.now() + READY_MS;
  while (readFileSync(restarts, "utf8") === "" && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  expect(readFileSync(restarts, "utf8")).not.toBe("");
  expect(readlinkSync(join(root, "opt/vendd/current"))).toBe("releases/2");
  await unit.daemon?.stop();
  await unit.start();
  const result = await applying;
  expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  const report = JSON.parse(result.stdout) as { outcomes: Array<{ result: string }> };
  expect(report.outcomes.map((o) => o.result)).toEqual(["committed"]);
  expect(readlinkSync(join(root, "opt/vendd/current"))).toBe("releases/2");
  await unit.daemon?.stop();
}
