import { createSimGpio } from "../../../drivers/gpio/sim.js";
import { createPulseController } from "../../../drivers/vmc/pulse/controller.js";
import { PULSE_ITEM } from "../../../drivers/vmc/pulse/options.js";
import { flushMicrotasks, ManualClock } from "../../../src/core/clock.js";
import type { Subject, SubjectDef } from "./subject.js";
import { describeVendController } from "./suite.js";
import { manualWaits } from "./waits.js";

const PULSE_PIN = 17;
const INHIBIT_PIN = 27;
const START_PIN = 22;
const PRICE = 1500;
const WIDTH_MS = 50;
const GAP_MS = 100;
/** 1500 / 500 = 3 pulses, each after its gap: the whole train takes 450 ms. */
const TRAIN_MS = 3 * (WIDTH_MS + GAP_MS);

const NO_WIRE = "pulse output is GPIO";

/**
 * The pulse controller on the sim GPIO (vending-mdb §6). The machine side is the wiring: a press of the start
 * button is the selection (one item at one price), the inhibit line withdraws a request, ends a session or
 * stops a train, and the clock runs the train. Pulse machines report no outcome: success is a complete
 * train, failure an inhibit before the first pulse, an unknown outcome (reset) an inhibit mid-train.
 */
const pulse: SubjectDef = {
  name: "pulse controller on the sim GPIO (drivers/vmc/pulse)",
  caps: {
    selection: "a pulse terminal has one item at one price: the start button is the selection",
    implicitSession: "a pulse machine has no session outside beginSession",
    multiVend: "one payment is one pulse train; a session ends after its vend",
    withdrawKeepsSession: "the inhibit line withdraws a request and ends the session with it",
    dispenseFailure: true,
    vmcReset: true,
    strayOutcome: "a pulse machine reports no outcome",
    display: "a pulse machine has no display (displayText does nothing)",
    silence: `${NO_WIRE}: no command waits for a confirmation`,
    unplug: `${NO_WIRE}: no link to pull`,
  },
  async setup() {
    return { make: async () => makePulse(), dispose: async () => undefined };
  },
};

function makePulse(): Subject {
  const clock = new ManualClock(0);
  const waits = manualWaits(clock);
  const gpio = createSimGpio({ clock });
  const ctrl = createPulseController({
    gpio,
    clock,
    pulsePin: PULSE_PIN,
    timing: { widthMs: WIDTH_MS, gapMs: GAP_MS },
    price: PRICE,
    valuePerPulse: 500,
    inhibitPin: INHIBIT_PIN,
    startPin: START_PIN,
  });
  // Inputs are switches to ground with the pull-up on: active low.
  const pulseInput = (pin: number) => {
    gpio.setInput(pin, false);
    gpio.setInput(pin, true);
  };
  const unsupported = (what: string) => () => {
    throw new Error(`${what}: not expressible for ${NO_WIRE}`);
  };
  return {
    ctrl,
    fixedRequest: { item: PULSE_ITEM, price: PRICE },
    commandTimeoutMs: 0,
    ...waits,
    settle: () => flushMicrotasks(5),
    quiet: () => flushMicrotasks(5),
    teardown: () => ctrl.close(),
    machine: {
      async requestVend() {
        pulseInput(START_PIN);
        return true;
      },
      async dispense(outcome) {
        // Failure: the machine goes busy during the lead-in gap, before the first pulse.
        if (outcome === "failure") gpio.setInput(INHIBIT_PIN, false);
        await waits.elapse(TRAIN_MS + 10);
        gpio.setInput(INHIBIT_PIN, true);
      },
      withdrawRequest: async () => pulseInput(INHIBIT_PIN),
      completeSession: async () => pulseInput(INHIBIT_PIN),
      async reset() {
        // After the first pulse (gap 100 + width 50), the machine goes busy: the train stops mid-way.
        await waits.elapse(GAP_MS + WIDTH_MS + 20);
        gpio.setInput(INHIBIT_PIN, false);
        await waits.elapse(TRAIN_MS);
        gpio.setInput(INHIBIT_PIN, true);
      },
      strayOutcome: unsupported("strayOutcome"),
      silence: unsupported("silence"),
      unplug: unsupported("unplug"),
      replug: unsupported("replug"),
      ready: () => true,
      approvals: () => null,
      displays: () => null,
      violations: () => [],
    },
  };
}

describeVendController(pulse);
