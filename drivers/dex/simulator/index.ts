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
}

export interface DexSimulator {
  readonly devicePath: string;
  readonly machine: DexMachine;
  readonly vmd: VmdSim;
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
  const queue = new ByteQueue(systemClock);
  let bridge: PtyBridge | null = null;
  const link = new Link(
    queue,
    {
      write: async (bytes) => {
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
    port.on("data", (chunk: Buffer) => queue.push(chunk));
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
    bridge = await openPty(opts.linkPath, (chunk) => queue.push(chunk));
  }
  const serving = vmd.serve();
  const devicePath = opts.attach ?? opts.linkPath ?? bridge.ptsPath;
  const b = bridge;
  return {
    devicePath,
    machine,
    vmd,
    async close() {
      vmd.stop();
      await serving;
      await b.kill();
    },
  };
}
