import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { createSimGpio } from "../../gpio/sim.js";
import type { VmcEvent } from "../controller.js";
import { createPulseController } from "./controller.js";
import type { PulseControllerOptions } from "./options.js";

const PULSE = 17;
const INHIBIT = 27;
const START = 22;

async function setup(over: Partial<PulseControllerOptions> = {}) {
  const clock = new ManualClock(0);
  const gpio = createSimGpio({ clock });
  const vmc = createPulseController({
    gpio,
    clock,
    pulsePin: PULSE,
    timing: { widthMs: 50, gapMs: 100 },
    price: 1500,
    valuePerPulse: 500,
    inhibitPin: INHIBIT,
    startPin: START,
    ...over,
  });
  const events: VmcEvent[] = [];
  vmc.onEvent((e) => events.push(e));
  await vmc.open();
  const press = () => {
    gpio.setInput(START, false);
    gpio.setInput(START, true);
  };
  const pulseWrites = () => gpio.writes.filter((w) => w.pin === PULSE).map((w) => [w.at, w.high]);
  return { clock, gpio, vmc, events, press, pulseWrites };
}

describe("pulse vend controller", () => {
  it("start button → vendRequested; approve → 3 pulses of 50 ms, 100 ms apart → vendSucceeded", async () => {
    const { clock, vmc, events, press, pulseWrites } = await setup();
    expect(events).toEqual([{ type: "link", up: true }]);
    press();
    expect(events.at(-1)).toEqual({ type: "vendRequested", item: 1, price: 1500 });
    await vmc.approveVend(1500);
    await clock.advanceAsync(449, 1);
    expect(events.at(-1)?.type).toBe("vendRequested");
    await clock.advanceAsync(1, 1);
    expect(events.at(-1)).toEqual({ type: "vendSucceeded", item: 1 });
    expect(pulseWrites()).toEqual([
      [0, false],
      [100, true],
      [150, false],
      [250, true],
      [300, false],
      [400, true],
      [450, false],
    ]);
    press();
    expect(events.at(-1)?.type).toBe("vendRequested");
  });

  it("supports an active-low output stage (idle level high)", async () => {
    const { clock, vmc, press, pulseWrites } = await setup({
      timing: { widthMs: 20, gapMs: 20, activeHigh: false },
    });
    press();
    await vmc.approveVend(1500);
    await clock.advanceAsync(200, 5);
    expect(pulseWrites().map(([, h]) => h)).toEqual([true, false, true, false, true, false, true]);
  });

  it("refuses to approve another amount or without a request", async () => {
    const { vmc, press } = await setup();
    await expect(vmc.approveVend(1500)).rejects.toMatchObject({ code: "state" });
    press();
    await expect(vmc.approveVend(1000)).rejects.toMatchObject({ code: "amount" });
    await vmc.denyVend();
    await expect(vmc.approveVend(1500)).rejects.toMatchObject({ code: "state" });
  });

  it("inhibit before the first pulse (during the lead-in gap) → vendFailed and no pulse", async () => {
    const { clock, gpio, vmc, events, press, pulseWrites } = await setup();
    press();
    await vmc.approveVend(1500);
    await clock.advanceAsync(99, 1);
    gpio.setInput(INHIBIT, false);
    await clock.advanceAsync(500, 10);
    expect(events.at(-1)).toEqual({ type: "vendFailed" });
    expect(pulseWrites()).toEqual([[0, false]]);
  });

  it("inhibit mid-train stops the pulses and reports an unknown outcome (reset)", async () => {
    const { clock, gpio, vmc, events, press, pulseWrites } = await setup();
    press();
    await vmc.approveVend(1500);
    await clock.advanceAsync(200, 1);
    gpio.setInput(INHIBIT, false);
    await clock.advanceAsync(500, 10);
    expect(events.at(-1)).toEqual({ type: "reset", reason: "pulse train stopped (inhibited) after 1 of 3" });
    expect(pulseWrites()).toHaveLength(3);
    expect(gpio.output(PULSE)).toBe(false);
  });

  it("takes no request while inhibited; an inhibit withdraws a pending request", async () => {
    const { gpio, vmc, events, press } = await setup();
    press();
    gpio.setInput(INHIBIT, false);
    expect(events.slice(-1)).toEqual([{ type: "vendCancelled" }]);
    press();
    expect(events.at(-1)?.type).toBe("vendCancelled");
    await expect(vmc.beginSession(2000)).rejects.toMatchObject({ code: "state" });
    gpio.setInput(INHIBIT, true);
    press();
    expect(events.at(-1)?.type).toBe("vendRequested");
  });

  it("check-in flow: session, start button, approve, success, then session end", async () => {
    const { clock, vmc, events, press } = await setup();
    await vmc.beginSession(2000);
    press();
    await vmc.approveVend(1500);
    await clock.advanceAsync(450, 10);
    expect(events.slice(1)).toEqual([
      { type: "sessionStarted", funds: 2000 },
      { type: "vendRequested", item: 1, price: 1500 },
      { type: "vendSucceeded", item: 1 },
      { type: "sessionEnded" },
    ]);
    await expect(vmc.beginSession(1000)).rejects.toMatchObject({ code: "amount" });
  });

  it("requestOnSession asks for the vend at session start; deny keeps the session, endSession ends it", async () => {
    const { vmc, events } = await setup({ requestOnSession: true });
    await vmc.beginSession(1500);
    expect(events.slice(1).map((e) => e.type)).toEqual(["sessionStarted", "vendRequested"]);
    await vmc.denyVend();
    await vmc.endSession();
    expect(events.at(-1)).toEqual({ type: "sessionEnded" });
    await expect(vmc.endSession()).rejects.toMatchObject({ code: "state" });
  });

  it("disable withdraws a pending request; no pulses while disabled", async () => {
    const { vmc, events, press } = await setup();
    press();
    await vmc.setEnabled(false);
    expect(events.at(-1)).toEqual({ type: "vendCancelled" });
    press();
    expect(events.at(-1)).toEqual({ type: "vendCancelled" });
    await vmc.setEnabled(true);
    press();
    expect(events.at(-1)?.type).toBe("vendRequested");
  });

  it("close mid-train releases the line and reports an unknown outcome", async () => {
    const { clock, gpio, vmc, events, press } = await setup();
    press();
    await vmc.approveVend(1500);
    await clock.advanceAsync(270, 1);
    expect(gpio.output(PULSE)).toBe(true);
    await vmc.close();
    expect(gpio.output(PULSE)).toBe(false);
    expect(events.at(-1)).toEqual({ type: "reset", reason: "pulse train stopped (aborted) after 1 of 3" });
    await expect(vmc.approveVend(1500)).rejects.toMatchObject({ code: "closed" });
  });

  it("refuses a price that is not a whole number of pulses, and timings under 10 ms", () => {
    const clock = new ManualClock(0);
    const base = {
      gpio: createSimGpio({ clock }),
      clock,
      pulsePin: PULSE,
      inhibitPin: null,
      startPin: null,
      timing: { widthMs: 50, gapMs: 50 },
    };
    expect(() => createPulseController({ ...base, price: 1250, valuePerPulse: 500 })).toThrow(/whole number/);
    expect(() =>
      createPulseController({ ...base, price: 1000, valuePerPulse: 500, timing: { widthMs: 5, gapMs: 50 } }),
    ).toThrow(/widthMs/);
  });
});
