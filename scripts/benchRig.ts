/**
 * The world the unit-level benches run a unit against: the payment-service emulator (in this process, V10
 * poll delay 10 ms, accept → Reserved at once) and the VMC simulator on a real PTY (socat), with a customer
 * and a VMC driven by events instead of polling loops, so that one vend costs what the unit costs and not
 * what a test's 20 ms wait steps cost. The unit itself runs either in this process (`startDaemon`) or as a
 * `vendd run` child (the built CLI).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { socatAvailable, startVmcSimulator, type VmcSimulator } from "../drivers/vmc/simulator/index.js";
import { type UnitFiles, writeUnitFiles } from "../src/chaos/unitFiles.js";
import { type Emulator, startEmulator } from "../src/emulator/index.js";

/** The customer's phone (an emulator seed user). */
export const BENCH_PHONE = "+4520031801";

/** Where a journal lives for a run: tmpfs (fsync nearly free) or a disk directory (real fsyncs). */
export function journalBase(medium: "tmpfs" | "disk"): string {
  if (medium === "tmpfs") return existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  return tmpdir();
}

export interface BenchWorld {
  emu: Emulator;
  sim: VmcSimulator;
  /** Requests that reached the emulator since the world started. */
  served(): number;
  close(): Promise<void>;
}

interface ServerRequestMessage {
  request: IncomingMessage;
}

function isServerMessage(m: unknown): m is ServerRequestMessage {
  return typeof m === "object" && m !== null && "request" in m;
}

/** Listener for requests as they reach this process's HTTP servers (the emulator): `METHOD path`. */
type ArrivalListener = (what: string) => void;

const arrivals = new Set<ArrivalListener>();
const onArrival = (m: unknown) => {
  if (!isServerMessage(m)) return;
  const what = `${m.request.method ?? ""} ${m.request.url ?? ""}`;
  for (const l of arrivals) l(what);
};

/** Calls `listener` for each request that reaches the emulator; returns the unsubscribe function. */
export function onServiceRequest(listener: ArrivalListener): () => void {
  if (arrivals.size === 0) subscribe("http.server.request.start", onArrival);
  arrivals.add(listener);
  return () => {
    arrivals.delete(listener);
    if (arrivals.size === 0) unsubscribe("http.server.request.start", onArrival);
  };
}

/** Starts the emulator and the VMC simulator (1,000 `r,ACK` a second: adapter commands wait ≤ 1 ms for one). */
export async function startBenchWorld(): Promise<BenchWorld> {
  if (!socatAvailable())
    throw new Error("socat is not installed: the unit benches need a PTY (apt install socat)");
  const emu = await startEmulator({ pollDelayMs: 10, acceptToReservedMs: 0 });
  let sim: VmcSimulator;
  try {
    sim = await startVmcSimulator({ ackRate: 1000 });
  } catch (err) {
    await emu.close();
    throw err;
  }
  let served = 0;
  const off = onServiceRequest(() => {
    served++;
  });
  return {
    emu,
    sim,
    served: () => served,
    async close() {
      off();
      await sim.close();
      await emu.close();
    },
  };
}

/**
 * The unit's files for `world`: the chaos rig's unit (V10, selection flow, the adapter on the simulator's
 * PTY) with its journal moved under `journalDir` and logging at `level`; `readPacingMs`: the adapter's
 * read pacing (vmc.readPacingMs; 0 lets a vend run at the unit's own pace). `simBoard`: the sim board's own
 * devices instead (sim VMC, display, BLE, NFC and GPIO in process; no serial port).
 */
export function writeBenchUnit(
  world: BenchWorld,
  journalDir: string,
  opts: { level?: string; simBoard?: boolean; readPacingMs?: number } = {},
): UnitFiles {
  const files = writeUnitFiles(world.emu.info, { driver: "v10", flow: "selection" }, world.sim.devicePath, {
    paymentTimeoutMs: 10_000,
    vendTimeoutMs: 10_000,
  });
  const raw: unknown = JSON.parse(readFileSync(files.configPath, "utf8"));
  if (typeof raw !== "object" || raw === null) throw new Error("unit config is not an object");
  const journalPath = join(journalDir, "journal.db");
  const config: Record<string, unknown> = {
    ...raw,
    journal: { path: journalPath },
    logging: { level: opts.level ?? "info" },
  };
  if (opts.readPacingMs !== undefined && typeof config.vmc === "object" && config.vmc !== null)
    config.vmc = { ...config.vmc, readPacingMs: opts.readPacingMs };
  if (opts.simBoard) {
    config.board = "sim";
    for (const k of ["vmc", "display", "ble", "nfc"]) delete config[k];
  }
  writeFileSync(files.configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
  return { ...files, journalPath };
}

/** Resolves on the next event-loop turn (timers phase): a short wait that does not spin. */
const tick = () => new Promise<void>((r) => setTimeout(r, 1));

/** Waits until `cond()` (checked each ms); false after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) return false;
    await tick();
  }
  return true;
}

export type VendResult = "success" | "denied" | "stuck";

/**
 * One selection vend by an instant customer: the VMC requests `item` at `price`; the customer accepts as
 * soon as the unit's payment request reaches the service; the VMC dispenses as soon as the approval
 * arrives; the vend is over when the unit's capture request has been answered and the unit took the
 * next step (its session is closed a moment later: `settleMs` of quiet lets it finish).
 */
export async function instantVend(
  world: BenchWorld,
  beaconId: string,
  item: number,
  price: number,
  settleMs = 2,
): Promise<VendResult> {
  const { emu, sim } = world;
  if (!(await until(() => sim.reader === "enabled", 5000))) return "stuck";
  let captured = false;
  let accepted = false;
  const offService = onServiceRequest((what) => {
    if (what === "POST /v10/payments") {
      // The request has only arrived: accept once the emulator has created the payment.
      setImmediate(function accept() {
        if (accepted) return;
        emu.userSimulation.checkin(beaconId, BENCH_PHONE);
        if (emu.userSimulation.accept(beaconId, BENCH_PHONE).status === 200) accepted = true;
        else setTimeout(accept, 1);
      });
    } else if (/^POST \/v10\/payments\/[^/]+\/capture$/.test(what)) captured = true;
  });
  let decided: "approved" | "denied" | null = null;
  const offVmc = sim.onCommand((line) => {
    if (!line.startsWith("C,VEND,")) return;
    decided = line === "C,VEND,-1" ? "denied" : "approved";
    if (decided === "approved") setImmediate(() => sim.dispenseSuccess({ endSession: true }));
  });
  try {
    sim.vend(item, price);
    if (!(await until(() => decided !== null, 15_000))) return "stuck";
    if (decided === "denied") return "denied";
    if (!(await until(() => captured, 15_000))) return "stuck";
    await new Promise((r) => setTimeout(r, settleMs));
    return "success";
  } finally {
    offService();
    offVmc();
  }
}

/** p-th percentile (nearest rank) of `values`, which it sorts. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  const i = Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1));
  return values[i] ?? Number.NaN;
}

export const round = (n: number, places = 3): number => Math.round(n * 10 ** places) / 10 ** places;
