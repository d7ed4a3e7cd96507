/**
 * The VMC-side DEX simulator on a pseudo-terminal: a simulated machine's audit counters (machine.ts) behind
 * the machine's half of DEX/UCS (vmd.ts). `vendd sim-dex` and the driver tests run it.
 */
import { systemClock } from "../../../src/core/clock.js";
import { openPty, type PtyBridge } from "../../vmc/simulator/pty.js";
import { ByteQueue } from "../byteQueue.js";
import { Link } from "../link.js";
import { STANDARD_TIMERS } from "../protocol.js";
import { DexMachine, type MachineOptions } from "./machine.js";
import { VmdSim } from "./vmd.js";

export interface DexSimOptions {
  /** Make a PTY linked here (socat). */
  linkPath?: string;
  /** Or attach to an existing tty (the other end of a PTY pair made elsewhere). */
  attach?: string;
  role?: "slave" | "master";
  machine?: Partial<MachineOptions>;
  /** Record what crosses the wire, with times (`DexSimulator.trace`): tests measure the timers with it. */
  trace?: boolean;
}

/** One write of the machine (`tx`) or one chunk it received (`rx`), at the simulator's clock. */
export interface WireEvent {
  at: number;
  dir: "tx" | "rx";
  bytes: Buffer;
}

/** The most wire events a trace keeps (the oldest are dropped). */
const TRACE_MAX = 5000;

export interface DexSimulator {
  readonly devicePath: string;
  readonly machine: DexMachine;
  readonly vmd: VmdSim;
  /** The wire, when started with `trace`; empty otherwise. */
  readonly trace: WireEvent[];
  close(): Promise<void>;
}

export const DEFAULT_SELECTIONS = [
  { selection: "11", price: 150, name: "Water" },
  { selection: "12", price: 270, name: "Crisps" },
  { selection: "13", price: 200, name: "Cola" },
] as const;

export async function startDexSimulator(opts: DexSimOptions): Promise<DexSimulator> {
  const machine = new DexMachine({
    commId: "SIM0000001",
    serial: "SIM000000001",
    selections: DEFAULT_SELECTIONS,
    ...opts.machine,
  });
  const trace: WireEvent[] = [];
  const record = (dir: WireEvent["dir"], bytes: Uint8Array) => {
    if (!opts.trace) return;
    trace.push({ at: systemClock.now(), dir, bytes: Buffer.from(bytes) });
    if (trace.length > TRACE_MAX) trace.shift();
  };
  const queue = new ByteQueue(systemClock);
  const received = (chunk: Buffer) => {
    record("rx", chunk);
    queue.push(chunk);
  };
  let bridge: PtyBridge | null = null;
  const link = new Link(
    queue,
    {
      write: async (bytes) => {
        record("tx", bytes);
        bridge?.write(bytes);
      },
    },
    systemClock,
    STANDARD_TIMERS,
  );
  const vmd = new VmdSim(link, machine, opts.role ?? "slave");
  if (opts.attach) {
    const { SerialPort } = await import("serialport");
    const port = new SerialPort({ path: opts.attach, baudRate: 9600, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    port.on("data", received);
    port.on("error", () => undefined);
    bridge = {
      ptsPath: opts.attach,
      write: (data) => {
        if (port.isOpen) port.write(Buffer.from(data));
      },
      kill: () => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
    };
  } else {
    if (!opts.linkPath) throw new Error("startDexSimulator needs linkPath or attach");
    bridge = await openPty(opts.linkPath, received);
  }
  const serving = vmd.serve();
  const devicePath = opts.attach ?? opts.linkPath ?? bridge.ptsPath;
  const b = bridge;
  return {
    devicePath,
    machine,
    vmd,
    trace,
    async close() {
      vmd.stop();
      await serving;
      await b.kill();
    },
  };
}
