/**
 * CPU bench of the two payment drivers (issue 4; run after `npm run build`:
 * `node dist/scripts/bench-drivers.js`). The emulator runs in a child process, so the CPU measured here is
 * the client's alone: the driver, undici, JSON, signing, GC. For each driver, built through
 * `createPaymentDriver` from a `buildConfig` configuration as the daemon builds them:
 * 1. 500 start + capture cycles (check-in and accept played by the child over IPC, outside the measured
 *    calls) → CPU per start, per capture, per cycle, and the whole loop's CPU per cycle (IPC included);
 * 2. 2,000 status polls of one payment, back to back (the emulator counts polls sooner than
 *    `pollDelayInMs` but never refuses them, pos-v10 §10) → CPU per poll.
 * Target: < 1 ms CPU per driver call. CPU is `process.cpuUsage()` user + system, in ms.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { buildConfig, type Secrets, type VenddConfig } from "../src/config/load.js";
import { paymentOptions } from "../src/config/seams.js";
import { systemClock } from "../src/core/clock.js";
import {
  emulatorLegacySettings,
  emulatorSecrets,
  emulatorV10Settings,
} from "../src/demo/emulatorSettings.js";
import type { EmulatorInfo } from "../src/emulator/index.js";
import type { PaymentDriver, PaymentRef } from "../src/payment/driver.js";
import { createPaymentDriver } from "../src/payment/factory.js";

const CYCLES = 500;
const POLLS = 2000;
const WARMUP = 50;

const CHILD = `
const m = await import(process.env.EMULATOR_MODULE);
const emu = await m.startEmulator({ pollDelayMs: 1000, acceptToReservedMs: 0 });
process.send({ info: emu.info });
process.on("message", async (msg) => {
  if (msg.pay) {
    const c = emu.userSimulation.checkin(msg.pay.beaconId, msg.pay.phone);
    const a = emu.userSimulation.accept(msg.pay.beaconId, msg.pay.phone);
    process.send({ paid: c.status === 200 && a.status === 200 });
  }
  if (msg.close) { await emu.close(); process.send({ closed: true }); process.disconnect(); }
});
`;

type Kind = "v10" | "legacy";

/** The child's next IPC message, read as an untrusted object. */
function nextMessage(child: ChildProcess): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`emulator child exited (${code})`));
    child.once("exit", onExit);
    child.once("message", (m: unknown) => {
      child.off("exit", onExit);
      if (typeof m === "object" && m !== null) resolve(m as Record<string, unknown>);
      else reject(new Error("emulator child sent a malformed message"));
    });
  });
}

/** The emulator's endpoints and test credentials, checked as far as this bench reads them. */
function emulatorInfo(m: Record<string, unknown>): EmulatorInfo {
  const info = m.info;
  const ok = (v: unknown, keys: string[]) =>
    typeof v === "object" &&
    v !== null &&
    keys.every((k) => typeof (v as Record<string, unknown>)[k] === "string");
  if (
    typeof info !== "object" ||
    info === null ||
    !ok((info as Record<string, unknown>).v10, [
      "baseUrl",
      "tokenUrl",
      "clientId",
      "clientSecret",
      "storeId",
    ]) ||
    !ok((info as Record<string, unknown>).legacy, [
      "baseUrl",
      "merchantId",
      "locationId",
      "apiKey",
      "merchantKey",
    ])
  ) {
    throw new Error("emulator child sent no usable info");
  }
  return info as EmulatorInfo;
}

/** CPU time used by this process since `from`, ms. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

function configFor(info: EmulatorInfo, kind: Kind): { config: VenddConfig; secrets: Secrets } {
  const unit = { id: `bench-${kind}`, name: `Bench ${kind}` };
  const payment =
    kind === "v10"
      ? { driver: "v10" as const, v10: emulatorV10Settings(info) }
      : {
          driver: "legacy" as const,
          legacy: { ...emulatorLegacySettings(info), posId: "bench-pos", posUnitId: "900000000000001" },
        };
  return { config: buildConfig({ unit, payment }), secrets: emulatorSecrets(info, kind) };
}

/** Start, pay (child, IPC), capture; returns the CPU of the two driver calls. */
async function cycle(
  driver: PaymentDriver,
  child: ChildProcess,
  beaconId: string,
  orderId: string,
): Promise<{ start: number; capture: number }> {
  let t = process.cpuUsage();
  const ref = await driver.start({ orderId, amount: 100, idempotencyKey: `k-${orderId}` });
  const start = cpuMs(t);
  const paid = nextMessage(child);
  child.send({ pay: { beaconId, phone: "+4520031801" } });
  if ((await paid).paid !== true) throw new Error(`${orderId}: the user simulation refused`);
  t = process.cpuUsage();
  await driver.capture(ref, 100);
  return { start, capture: cpuMs(t) };
}

async function benchKind(
  info: EmulatorInfo,
  child: ChildProcess,
  kind: Kind,
): Promise<Record<string, number>> {
  const { config, secrets } = configFor(info, kind);
  const driver = await createPaymentDriver(paymentOptions(config, secrets), {
    clock: systemClock,
    logger: pino({ level: "silent" }),
    ownsOrder: () => false,
  });
  try {
    const pos = await driver.open();
    for (let i = 0; i < WARMUP; i++) await cycle(driver, child, pos.beaconId, `w${kind}${i}`);
    let starts = 0;
    let captures = 0;
    const loopFrom = process.cpuUsage();
    const wall0 = performance.now();
    for (let i = 0; i < CYCLES; i++) {
      const c = await cycle(driver, child, pos.beaconId, `c${kind}${i}`);
      starts += c.start;
      captures += c.capture;
    }
    const loopCpu = cpuMs(loopFrom);
    const cycleWall = (performance.now() - wall0) / CYCLES;

    const ref: PaymentRef = await driver.start({
      orderId: `p${kind}`,
      amount: 100,
      idempotencyKey: `kp${kind}`,
    });
    for (let i = 0; i < WARMUP; i++) await driver.status(ref);
    const pollFrom = process.cpuUsage();
    const pollWall0 = performance.now();
    for (let i = 0; i < POLLS; i++) await driver.status(ref);
    const pollCpu = cpuMs(pollFrom) / POLLS;
    const pollWall = (performance.now() - pollWall0) / POLLS;
    await driver.cancel(ref);
    return {
      [`${kind}CpuPerStartMs`]: round(starts / CYCLES),
      [`${kind}CpuPerCaptureMs`]: round(captures / CYCLES),
      [`${kind}CpuPerCycleMs`]: round((starts + captures) / CYCLES),
      [`${kind}LoopCpuPerCycleMs`]: round(loopCpu / CYCLES),
      [`${kind}WallPerCycleMs`]: round(cycleWall),
      [`${kind}CpuPerPollMs`]: round(pollCpu),
      [`${kind}WallPerPollMs`]: round(pollWall),
    };
  } finally {
    await driver.close();
  }
}

/** Runs both drivers against an emulator in a child process and returns the figures (ms). */
export async function benchDrivers(): Promise<Record<string, number | string>> {
  const url = new URL("../src/emulator/index.js", import.meta.url).href;
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
    env: { ...process.env, EMULATOR_MODULE: url },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const info = emulatorInfo(await nextMessage(child));
  try {
    const v10 = await benchKind(info, child, "v10");
    const legacy = await benchKind(info, child, "legacy");
    return { emulator: "child process", cycles: CYCLES, polls: POLLS, ...v10, ...legacy };
  } finally {
    const closed = nextMessage(child);
    child.send({ close: true });
    await closed;
  }
}

/** The figures as a small table: one row per driver, CPU ms per call. */
export function formatTable(f: Record<string, number | string>): string {
  const cols: [string, string][] = [
    ["CpuPerStartMs", "start"],
    ["CpuPerCaptureMs", "capture"],
    ["CpuPerCycleMs", "start+capture"],
    ["LoopCpuPerCycleMs", "cycle incl. IPC"],
    ["CpuPerPollMs", "status poll"],
  ];
  const head = ["CPU ms per", ...cols.map(([, label]) => label)];
  const rows = (["v10", "legacy"] as const).map((k) => [
    k,
    ...cols.map(([c]) => String(f[`${k}${c}`] ?? "-")),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ");
  return [line(head), ...rows.map(line)].join("\n");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchDrivers().then(
    (figures) => {
      process.stdout.write(
        `${formatTable(figures)}\n(emulator in a child process; target < 1 ms CPU per call)\n`,
      );
      process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    },
    (e: unknown) => {
      process.stderr.write(`bench-drivers: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
