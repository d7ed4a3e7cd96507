import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BindingInterface } from "@serialport/bindings-cpp";
import { SerialPortMock } from "serialport";
import { createAdapterController } from "../../../drivers/vmc/adapter/index.js";
import { flushMicrotasks, ManualClock } from "../../../src/core/clock.js";
import { recordingLogger } from "../../support/vmc.js";
import { FULL_MDB, type Subject, type SubjectDef } from "./subject.js";
import { describeVendController } from "./suite.js";
import { TranscriptMachine } from "./transcript.js";
import { manualWaits } from "./waits.js";

// `SerialPortMock.binding` is @serialport/binding-mock's MockBinding (see test/unit/vmc-mock-binding.test.ts).
const MockBinding = SerialPortMock.binding;
type MockPort = Awaited<ReturnType<typeof MockBinding.open>>;

const COMMAND_TIMEOUT_MS = 500;
const PRESENCE_MS = 50;

/**
 * The adapter driver over serialport's mock binding on a ManualClock. The machine writes the adapter lines
 * of vending-mdb §2.4 into the mock port (transcript.ts). The device node is a plain file, so removing it
 * is an unplug the driver's presence check sees, as in test/vmc-backoff.test.ts.
 */
const mock: SubjectDef = {
  name: "mdb-adapter driver over serialport's mock binding (vending-mdb §2.4 transcripts)",
  caps: FULL_MDB,
  async setup() {
    const dir = mkdtempSync(join(tmpdir(), "vendd-vmc-contract-"));
    return {
      make: async () => makeMock(join(dir, "ttyMOCK")),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

function makeMock(node: string): Subject {
  writeFileSync(node, "");
  MockBinding.reset();
  MockBinding.createPort(node, { echo: false });
  const clock = new ManualClock();
  const waits = manualWaits(clock);
  const machine = new TranscriptMachine();
  let port: MockPort | null = null;
  const binding: BindingInterface = {
    list: () => MockBinding.list(),
    async open(o) {
      if (!existsSync(node)) throw new Error(`cannot open ${node}: no such device`);
      const p = await MockBinding.open(o);
      const write = p.write.bind(p);
      p.write = async (buf: Buffer) => {
        await write(buf);
        machine.receive(buf);
      };
      machine.connect((data) => {
        if (!p.isOpen) return false;
        p.emitData(data);
        return true;
      });
      port = p;
      return p;
    },
  };
  const { logger, lines } = recordingLogger();
  const ctrl = createAdapterController({
    path: node,
    currencyCode: "EUR",
    clock,
    logger,
    binding,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    linkTimeoutMs: 60_000,
    readPacingMs: 0, // the ManualClock would hold paced reads until advanced
    presenceCheckMs: PRESENCE_MS,
    reopenMinMs: 100,
    reopenMaxMs: 400,
  });
  let barrier = 0;
  /** Advances the clock in 10 ms steps until `done()`; bounded. */
  const advanceUntil = async (done: () => boolean, what: string) => {
    for (let t = 0; t < 5000 && !done(); t += 10) await waits.elapse(10);
    if (!done()) throw new Error(`not reached within 5 s of clock time: ${what}`);
  };
  return {
    ctrl,
    fixedRequest: null,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    ...waits,
    async settle() {
      // A version line through the port: once the driver logged it, every earlier line was handled.
      const tag = `v,sync-${++barrier}`;
      if (!machine.send(tag)) return flushMicrotasks(5);
      await waits.until(() => lines.some((l) => l.msg === `adapter info: ${tag}`), `barrier ${tag}`);
    },
    quiet: () => flushMicrotasks(10),
    teardown: () => ctrl.close(),
    machine: {
      requestVend: async (item, price) => machine.requestVend(item, price),
      dispense: async (outcome, opts) => machine.dispense(outcome, opts),
      withdrawRequest: async () => machine.withdrawRequest(),
      completeSession: async () => machine.completeSession(),
      reset: async () => machine.reset(),
      strayOutcome: async () => void machine.send("c,VEND,SUCCESS"),
      silence: (on) => machine.silence(on),
      async unplug() {
        rmSync(node);
        await advanceUntil(() => port?.isOpen === false, "the driver closed the vanished port");
      },
      async replug() {
        machine.replugged();
        writeFileSync(node, "");
        await advanceUntil(() => machine.ready, "reopened and configured");
      },
      ready: () => machine.ready,
      approvals: () => machine.approvals,
      displays: () => machine.displays,
      violations: () => machine.violations,
    },
  };
}

describeVendController(mock);
