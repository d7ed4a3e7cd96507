import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Minor } from "../../../src/core/money.js";
import { AckTicker } from "./acks.js";
import { type EndOptions, VmcSimCore, VmcSimError } from "./core.js";
import { type MachineDex, type MachineDexOptions, startMachineDex } from "./dexPort.js";
import type { Approval, SimReader } from "./hostCommands.js";
import { attachTty, openPty, type PtyBridge } from "./pty.js";

export { VmcSimCore, VmcSimError } from "./core.js";
export type { Approval, SimReader } from "./hostCommands.js";
export { PtyError, socatAvailable } from "./pty.js";

export interface VmcSimulatorOptions {
  /** Where the PTY is linked for the driver; default `ttyVMC` in a fresh temporary directory. */
  linkPath?: string;
  /**
   * Attach to this existing tty (one end of a PTY pair made elsewhere) instead of making a PTY; the driver
   * then opens the other end. `unplug`/`replug` are not available then.
   */
  attach?: string;
  /** `r,ACK` lines per second (VMC polls); default 20, 0 for none. */
  ackRate?: number;
  /** Decimal places on the wire; default 2. */
  decimals?: number;
  /** The VMC enables the reader as soon as the host switches it on; default true. */
  autoEnable?: boolean;
  /** The machine's DEX port on a second PTY (dexPort.ts): its audit counters follow the VMC's vends. */
  dex?: MachineDexOptions;
}

/** The adapter+VMC side over a real PTY, scriptable from tests and from `vendd sim-vmc`. */
export interface VmcSimulator {
  /** The PTY end the driver opens. */
  readonly devicePath: string;
  /** Every host command received, in order. */
  readonly commands: readonly string[];
  readonly approvals: readonly Approval[];
  /** Vend requests made so far: the ordinal of the last one (`Approval.request`). */
  readonly requests: number;
  readonly displays: readonly string[];
  readonly violations: readonly string[];
  /** The adapter's (volatile) SETCONF values. */
  readonly config: ReadonlyMap<string, string>;
  readonly reader: SimReader;
  /** The machine's DEX port, when started with `dex`. */
  readonly dex: MachineDex | null;
  vend(item: number, price: Minor): void;
  dispenseSuccess(opts?: EndOptions): void;
  dispenseFailure(opts?: EndOptions): void;
  /** Return button: VEND CANCEL during a vend request, SESSION COMPLETE in an idle session. */
  customerCancel(): void;
  /** The VMC ends an idle session (after the last vend of a multi-vend). */
  completeSession(): void;
  vmcReset(): void;
  adapterPowerCycle(): void;
  /** Sends one raw line (with `\n`). */
  garbage(line: string): void;
  /** Sends a line of `length` bytes (default 1000) that looks like a vend request. */
  overlongLine(length?: number): void;
  setAckRate(perSecond: number): void;
  /** Pulls the cable: the PTY disappears. */
  unplug(): Promise<void>;
  /** Plugs it back in at the same path. */
  replug(): Promise<void>;
  /** Subscribes to host commands as they arrive; returns the unsubscribe function. */
  onCommand(listener: (line: string) => void): () => void;
  /** Subscribes to the lines sent to the host, right after they were written to the PTY (benches). */
  onSent(listener: (data: string) => void): () => void;
  /** Resolves with the first host command at index ≥ `from` (default: now) matching `pattern`. */
  waitForCommand(pattern: RegExp, timeoutMs?: number, from?: number): Promise<string>;
  close(): Promise<void>;
}

export async function startVmcSimulator(opts: VmcSimulatorOptions = {}): Promise<VmcSimulator> {
  const tmp = opts.linkPath || opts.attach ? null : mkdtempSync(join(tmpdir(), "vendd-vmc-"));
  const devicePath = opts.attach ?? opts.linkPath ?? join(tmp ?? tmpdir(), "ttyVMC");
  const core = new VmcSimCore({ decimals: opts.decimals ?? 2, autoEnable: opts.autoEnable ?? true });
  let pty: PtyBridge | null = null;
  const plug = async () => {
    pty = opts.attach
      ? await attachTty(opts.attach, core)
      : await openPty(devicePath, (chunk) => core.receive(chunk));
    const bridge = pty;
    core.connect((data) => bridge.write(data));
  };
  await plug();
  const dex = opts.dex === undefined ? null : await startMachineDex(opts.dex);
  const acks = new AckTicker(opts.ackRate ?? 20, (n) => core.send(...Array<string>(n).fill("r,ACK")));
  const st = core.state;
  return {
    devicePath,
    get commands() {
      return core.commands;
    },
    get approvals() {
      return st.approvals;
    },
    get requests() {
      return st.requests;
    },
    get displays() {
      return st.displays;
    },
    get violations() {
      return st.violations;
    },
    get config() {
      return st.config;
    },
    get reader() {
      return st.reader;
    },
    dex,
    vend: (item, price) => core.vend(item, price),
    dispenseSuccess(o) {
      const vend = core.state.vend;
      core.dispenseSuccess(o);
      // the machine counts what it delivered: a cashless vend the unit approved (the VEND SUCCESS just sent)
      if (vend) dex?.cashlessVend(vend.item, vend.price);
    },
    dispenseFailure: (o) => core.dispenseFailure(o),
    customerCancel: () => core.customerCancel(),
    completeSession: () => core.completeSession(),
    vmcReset: () => core.vmcReset(),
    adapterPowerCycle: () => core.adapterPowerCycle(),
    garbage: (line) => core.send(line),
    overlongLine: (length = 1000) => core.send(`c,STATUS,VEND,1.00,${"9".repeat(Math.max(0, length - 18))}`),
    setAckRate: (n) => acks.setRate(n),
    onCommand: (listener) => core.onCommand(listener),
    onSent: (listener) => core.onSent(listener),
    async unplug() {
      if (opts.attach) throw new VmcSimError("unplug needs a PTY made by the simulator");
      core.connect(null);
      const p = pty;
      pty = null;
      await p?.kill();
    },
    async replug() {
      if (pty) throw new VmcSimError("already plugged in");
      await plug();
    },
    waitForCommand(pattern, timeoutMs = 2000, from = core.commands.length) {
      const found = core.commands.slice(from).find((c) => pattern.test(c));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const off = core.onCommand((line) => {
          if (!pattern.test(line)) return;
          off();
          clearTimeout(timer);
          resolve(line);
        });
        const timer = setTimeout(() => {
          off();
          reject(new VmcSimError(`no host command matching ${pattern} within ${timeoutMs} ms`));
        }, timeoutMs);
      });
    },
    async close() {
      acks.stop();
      await dex?.close();
      core.connect(null);
      await (pty as PtyBridge | null)?.kill();
      pty = null;
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    },
  };
}
