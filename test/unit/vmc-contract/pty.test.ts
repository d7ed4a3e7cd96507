import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAdapterController } from "../../../drivers/vmc/adapter/index.js";
import { AckTicker } from "../../../drivers/vmc/simulator/acks.js";
import { VmcSimCore, VmcSimError } from "../../../drivers/vmc/simulator/index.js";
import { openPty, type PtyBridge } from "../../../drivers/vmc/simulator/pty.js";
import { systemClock } from "../../../src/core/clock.js";
import { HAVE_SOCAT, recordingLogger } from "../../support/vmc.js";
import { FULL_MDB, type MachineSide, type Subject, type SubjectDef } from "./subject.js";
import { describeVendController } from "./suite.js";
import { realWaits } from "./waits.js";

const COMMAND_TIMEOUT_MS = 2000; // the driver default: generous on a loaded machine
/** Bound of every wait on real I/O (a loaded 2-core machine answers a PTY round trip in milliseconds). */
const WAIT_MS = 5000;

/**
 * The adapter driver over a real PTY made by socat, with the VMC simulator's core on the other end. One
 * socat serves every case (a fresh core per case reads what the host writes); an unplug kills it and a
 * replug starts a new one at the same path. The binding flushes the tty when it opens it, and the driver
 * drops lines that do not fit its state, so bytes left over from an earlier case cannot become events.
 */
const pty: SubjectDef = {
  name: "mdb-adapter driver over a real PTY with the VMC simulator core (socat)",
  skip: HAVE_SOCAT ? undefined : "socat is not installed (apt-get install socat)",
  caps: FULL_MDB,
  async setup() {
    const dir = mkdtempSync(join(tmpdir(), "vendd-vmc-contract-"));
    const link = join(dir, "ttyVMC");
    let core: VmcSimCore | null = null;
    let muted = false;
    const onData = (chunk: Buffer) => {
      if (!muted) core?.receive(chunk);
    };
    let bridge: PtyBridge | null = await openPty(link, onData);
    // The VMC polls the whole time (vending-mdb §1.1), also between cases.
    const acks = new AckTicker(50, (n) => bridge?.write("r,ACK\n".repeat(n)));
    const wire: Wire = {
      link,
      write: (data) => bridge?.write(data),
      setCore(c) {
        core = c;
        muted = false;
      },
      mute(on) {
        muted = on;
      },
      async unplug() {
        const b = bridge;
        bridge = null;
        await b?.kill();
      },
      async replug() {
        if (!bridge) bridge = await openPty(link, onData);
      },
    };
    return {
      make: async () => makePty(wire),
      async dispose() {
        acks.stop();
        await bridge?.kill();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** The shared PTY as one case sees it. */
interface Wire {
  link: string;
  write(data: string): void;
  setCore(core: VmcSimCore | null): void;
  mute(on: boolean): void;
  unplug(): Promise<void>;
  replug(): Promise<void>;
}

function makePty(wire: Wire): Subject {
  const core = new VmcSimCore();
  core.connect((data) => wire.write(data));
  wire.setCore(core);
  const waits = realWaits(WAIT_MS);
  const { logger, lines } = recordingLogger();
  const ctrl = createAdapterController({
    path: wire.link,
    currencyCode: "DKK",
    clock: systemClock,
    logger,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    linkTimeoutMs: 1000,
    reopenMinMs: 20,
    reopenMaxMs: 200,
    presenceCheckMs: 50,
    // Pacing stays on (its code path is part of the transport) but short: with the r,ACK flood every read
    // follows data, and the default 50 ms per read would make each case's start-up take a quarter second.
    readPacingMs: 5,
  });
  // After a reset or replug the machine counts as ready once the host has configured the reader again.
  let awaitingHost = false;
  core.onCommand((line) => {
    if (line === "C,1") awaitingHost = false;
  });
  let barrier = 0;
  const machine: MachineSide = {
    async requestVend(item, price) {
      try {
        core.vend(item, price);
        return true;
      } catch (err) {
        if (err instanceof VmcSimError) return false;
        throw err;
      }
    },
    async dispense(outcome, opts) {
      if (outcome === "success") core.dispenseSuccess(opts);
      else core.dispenseFailure(opts);
    },
    withdrawRequest: async () => core.customerCancel(),
    completeSession: async () => core.completeSession(),
    async reset() {
      awaitingHost = true;
      core.vmcReset();
    },
    strayOutcome: async () => core.send("c,VEND,SUCCESS"),
    silence: (on) => wire.mute(on),
    async unplug() {
      core.connect(null);
      await wire.unplug();
    },
    async replug() {
      awaitingHost = true;
      await wire.replug();
      core.connect((data) => wire.write(data));
      await waits.until(() => machine.ready(), "the driver reopened the PTY and configured the reader");
    },
    ready: () => !awaitingHost && (core.state.reader === "enabled" || core.state.reader === "idle"),
    approvals: () => core.state.approvals.map((a) => a.amount),
    displays: () => core.state.displays,
    violations: () => core.state.violations,
  };
  return {
    ctrl,
    machine,
    fixedRequest: null,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    ...waits,
    async settle() {
      // A version line down the PTY: once the driver logged it, every earlier line was handled.
      const tag = `v,sync-${++barrier}`;
      core.send(tag);
      await waits.until(() => lines.some((l) => l.msg === `adapter info: ${tag}`), `barrier ${tag}`);
    },
    // The controller is closed: what the machine wrote has had time to arrive (a PTY round trip is < 1 ms).
    quiet: () => waits.elapse(100),
    async teardown() {
      await ctrl.close();
      core.connect(null);
      wire.setCore(null);
      await wire.replug(); // the next case gets a plugged-in PTY even when this one ended unplugged
    },
  };
}

describeVendController(pty);
