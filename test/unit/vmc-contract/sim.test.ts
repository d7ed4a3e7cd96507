import { SimVmc } from "../../../drivers/vmc/sim.js";
import { flushMicrotasks, ManualClock } from "../../../src/core/clock.js";
import type { Subject, SubjectDef } from "./subject.js";
import { describeVendController } from "./suite.js";
import { manualWaits } from "./waits.js";

const IN_PROCESS = "in process";

/**
 * The in-process sim: the machine side is its own API. Dispense outcomes are scripted (`outcome: none`),
 * so the case decides when and how each vend ends.
 */
const sim: SubjectDef = {
  name: "in-process sim (drivers/vmc/sim.ts)",
  caps: {
    selection: true,
    implicitSession: true,
    multiVend: true,
    withdrawKeepsSession: true,
    dispenseFailure: true,
    vmcReset: true,
    strayOutcome: `${IN_PROCESS}: no wire to carry a stray outcome line`,
    display: true,
    silence: `${IN_PROCESS}: every command is answered at once`,
    unplug: `${IN_PROCESS}: no link to pull`,
  },
  async setup() {
    return { make: async () => makeSim(), dispose: async () => undefined };
  },
};

function makeSim(): Subject {
  const clock = new ManualClock();
  const vmc = new SimVmc({ clock, outcome: () => "none" });
  const unsupported = (what: string) => () => {
    throw new Error(`${what}: not expressible ${IN_PROCESS}`);
  };
  return {
    ctrl: vmc,
    fixedRequest: null,
    commandTimeoutMs: 0,
    ...manualWaits(clock),
    settle: () => flushMicrotasks(5),
    quiet: () => flushMicrotasks(5),
    teardown: () => vmc.close(),
    machine: {
      requestVend: async (item, price) => vmc.requestVend(item, price),
      async dispense(outcome, opts) {
        if (outcome === "success") vmc.dispenseSuccess();
        else vmc.dispenseFailure();
        // The sim keeps a session open after a vend; the VMC's SESSION COMPLETE is a separate step.
        if (opts.endSession) vmc.finishSession();
      },
      withdrawRequest: async () => vmc.customerCancel(),
      completeSession: async () => vmc.finishSession(),
      reset: async () => vmc.reset(),
      strayOutcome: unsupported("strayOutcome"),
      silence: unsupported("silence"),
      unplug: unsupported("unplug"),
      replug: unsupported("replug"),
      ready: () => vmc.status === "enabled" || vmc.status === "session",
      approvals: () => null,
      displays: () => vmc.texts,
      violations: () => [],
    },
  };
}

describeVendController(sim);
