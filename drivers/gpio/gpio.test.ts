import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createJohnnyFiveGpio, type IoPlugin } from "./johnny-five.js";
import { pulseTrain } from "./pulse.js";
import { createSimGpio } from "./sim.js";

/** A virtual johnny-five IO plugin: the surface johnny-five's Board reads, recording every call. */
class VirtualIo extends EventEmitter implements IoPlugin {
  readonly name = "virtual";
  readonly isReady = true;
  readonly MODES = { INPUT: 0, OUTPUT: 1, ANALOG: 2, PWM: 3, SERVO: 4, PULLUP: 11 };
  readonly pins = Array.from({ length: 28 }, () => ({
    supportedModes: [0, 1, 11],
    mode: 0,
    value: 0,
    report: 1,
    analogChannel: 127,
  }));
  readonly analogPins: number[] = [];
  readonly calls: string[] = [];
  private readers = new Map<string, (v: number) => void>();
  pinMode(pin: number | string, mode: number) {
    this.calls.push(`mode ${pin} ${mode}`);
  }
  digitalWrite(pin: number | string, value: 0 | 1) {
    this.calls.push(`write ${pin} ${value}`);
  }
  digitalRead(pin: number | string, handler: (v: number) => void) {
    this.readers.set(String(pin), handler);
  }
  report(pin: number, value: number) {
    this.readers.get(String(pin))?.(value);
  }
}

describe("sim gpio", () => {
  it("records writes with clock time and reports input changes only", async () => {
    const clock = new ManualClock(1000);
    const gpio = createSimGpio({ clock });
    expect(() => gpio.write(1, true)).toThrow(/new/);
    await gpio.open();
    gpio.write(1, true);
    clock.advance(5);
    gpio.write(1, false);
    expect(gpio.writes).toEqual([
      { pin: 1, high: true, at: 1000 },
      { pin: 1, high: false, at: 1005 },
    ]);
    const seen: boolean[] = [];
    const off = gpio.onInput(4, (h) => seen.push(h), { pullUp: true });
    expect(gpio.read(4)).toBe(true);
    gpio.setInput(4, true);
    gpio.setInput(4, false);
    off();
    gpio.setInput(4, true);
    expect(seen).toEqual([false]);
  });
});

describe("pulseTrain", () => {
  it("keeps the gap before every pulse and stops at a hold", async () => {
    const clock = new ManualClock(0);
    const gpio = createSimGpio({ clock });
    await gpio.open();
    let hold: string | null = null;
    const train = pulseTrain(gpio, { pin: 2, count: 5, widthMs: 30, gapMs: 70, clock, hold: () => hold });
    await clock.advanceAsync(250, 5);
    hold = "busy";
    await clock.advanceAsync(200, 5);
    expect(await train).toEqual({ sent: 2, stopped: "busy" });
    expect(gpio.writes.map((w) => [w.at, w.high])).toEqual([
      [70, true],
      [100, false],
      [170, true],
      [200, false],
    ]);
  });

  it("refuses counts outside 1..1000", async () => {
    const clock = new ManualClock(0);
    const gpio = createSimGpio({ clock });
    await expect(pulseTrain(gpio, { pin: 2, count: 0, widthMs: 30, gapMs: 30, clock })).rejects.toMatchObject(
      {
        code: "config",
      },
    );
  });
});

describe("johnny-five gpio over a virtual IO plugin", () => {
  it("opens a real johnny-five Board, drives outputs and reports inputs", async () => {
    const plugin = new VirtualIo();
    const gpio = createJohnnyFiveGpio({ io: { kind: "instance", plugin }, clock: new ManualClock(0) });
    const seen: boolean[] = [];
    gpio.onInput(5, (h) => seen.push(h), { pullUp: true });
    await gpio.open();
    gpio.write(13, true);
    gpio.write(13, false);
    plugin.report(5, 1);
    plugin.report(5, 1);
    plugin.report(5, 0);
    expect(seen).toEqual([true, false]);
    expect(gpio.read(5)).toBe(false);
    expect(plugin.calls).toEqual(["mode 5 11", "mode 13 1", "write 13 1", "write 13 0"]);
    await gpio.close();
    expect(() => gpio.write(13, true)).toThrow(/not open/);
  });

  it("fails open with 'unavailable' when the board never gets ready", async () => {
    const clock = new ManualClock(0);
    const plugin = Object.assign(new VirtualIo(), { isReady: false });
    const gpio = createJohnnyFiveGpio({ io: { kind: "instance", plugin }, clock, readyTimeoutMs: 500 });
    const opening = gpio.open().catch((e: unknown) => e);
    await clock.advanceAsync(500, 100);
    expect(await opening).toMatchObject({ code: "unavailable" });
  });
});
