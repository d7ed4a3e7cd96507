import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createGpio } from "./factory.js";
import { createPanel } from "./panel.js";
import { createSimGpio } from "./sim.js";

async function setup() {
  const clock = new ManualClock(0);
  const gpio = createSimGpio({ clock });
  await gpio.open();
  const panel = createPanel({ gpio, clock, pins: { statusLed: 18, serviceButton: 23, doorSwitch: 24 } });
  return { clock, gpio, panel };
}

describe("panel", () => {
  it("debounces the service button: bounces give one press", async () => {
    const { clock, gpio, panel } = await setup();
    let presses = 0;
    panel.onServiceButton(() => presses++);
    for (let i = 0; i < 5; i++) {
      gpio.setInput(23, false);
      clock.advance(5);
      gpio.setInput(23, true);
      clock.advance(5);
    }
    gpio.setInput(23, false);
    clock.advance(49);
    expect(presses).toBe(0);
    clock.advance(1);
    expect(presses).toBe(1);
    gpio.setInput(23, true);
    clock.advance(60);
    expect(presses).toBe(1);
  });

  it("reports the door opening and closing", async () => {
    const { clock, gpio, panel } = await setup();
    const seen: boolean[] = [];
    panel.onDoor((open) => seen.push(open));
    expect(panel.doorOpen()).toBe(true);
    gpio.setInput(24, false);
    clock.advance(50);
    gpio.setInput(24, true);
    clock.advance(10);
    gpio.setInput(24, false);
    clock.advance(50);
    gpio.setInput(24, true);
    clock.advance(50);
    expect(seen).toEqual([false, true]);
    expect(panel.doorOpen()).toBe(true);
  });

  it("drives the status LED: steady, blinking, off", async () => {
    const { clock, gpio, panel } = await setup();
    panel.setStatus("ready");
    expect(gpio.output(18)).toBe(true);
    panel.setStatus("busy");
    const levels: (boolean | null)[] = [];
    for (let i = 0; i < 4; i++) {
      levels.push(gpio.output(18));
      clock.advance(500);
    }
    expect(levels).toEqual([true, false, true, false]);
    panel.close();
    clock.advance(2000);
    expect(gpio.output(18)).toBe(false);
    expect(clock.armed).toBe(0);
  });
});

describe("createGpio", () => {
  it("creates the sim and refuses unknown kinds with the valid names", async () => {
    const gpio = await createGpio({ kind: "sim" }, { clock: new ManualClock(0) });
    expect(gpio.kind).toBe("sim");
    await expect(createGpio({ kind: "wiringpi" } as never, { clock: new ManualClock(0) })).rejects.toThrow(
      'unknown gpio kind "wiringpi"; valid: sim, johnny-five',
    );
  });
});
