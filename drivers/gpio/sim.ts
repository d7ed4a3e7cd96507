import type { Clock } from "../../src/core/clock.js";
import { GpioError, type GpioPin, type GpioPort } from "./port.js";

/** One output write as the simulated port recorded it. */
export interface GpioWrite {
  pin: GpioPin;
  high: boolean;
  /** Clock time of the write (ms). */
  at: number;
}

/** The in-memory GPIO port: records outputs, and inputs are set by the simulation or a test. */
export interface SimGpio extends GpioPort {
  /** Every output write, oldest first (bounded by `historyLimit`). */
  readonly writes: GpioWrite[];
  /** The level an output pin was last driven to, or null when it was never written. */
  output(pin: GpioPin): boolean | null;
  /** Sets an input's level (the button pressed, the door opened); listeners run synchronously on a change. */
  setInput(pin: GpioPin, high: boolean): void;
}

export interface SimGpioOptions {
  /** Timestamps the recorded writes. */
  clock: Clock;
  /** Input levels before any `setInput` (default: none; a pull-up input with no entry reads high). */
  inputs?: Record<string, boolean>;
  /** Most writes kept in `writes` (default 10,000); older ones are dropped first. */
  historyLimit?: number;
}

export function createSimGpio(opts: SimGpioOptions): SimGpio {
  const limit = opts.historyLimit ?? 10_000;
  const levels = new Map<string, boolean>(Object.entries(opts.inputs ?? {}));
  const outputs = new Map<string, boolean>();
  const listeners = new Map<string, Set<(high: boolean) => void>>();
  const writes: GpioWrite[] = [];
  let state: "new" | "open" | "closed" = "new";

  const ensureOpen = (what: string) => {
    if (state !== "open") throw new GpioError("closed", `gpio ${what}: port is ${state}`);
  };

  return {
    kind: "sim",
    writes,
    async open() {
      if (state === "closed") throw new GpioError("closed", "gpio open: port is closed");
      state = "open";
    },
    write(pin, high) {
      ensureOpen("write");
      outputs.set(String(pin), high);
      writes.push({ pin, high, at: opts.clock.now() });
      if (writes.length > limit) writes.splice(0, writes.length - limit);
    },
    output: (pin) => outputs.get(String(pin)) ?? null,
    read: (pin) => levels.get(String(pin)) ?? null,
    onInput(pin, listener, o) {
      const key = String(pin);
      if (o?.pullUp && !levels.has(key)) levels.set(key, true);
      const set = listeners.get(key) ?? new Set();
      set.add(listener);
      listeners.set(key, set);
      return () => {
        set.delete(listener);
      };
    },
    setInput(pin, high) {
      const key = String(pin);
      if (levels.get(key) === high) return;
      levels.set(key, high);
      if (state !== "open") return;
      for (const l of [...(listeners.get(key) ?? [])]) l(high);
    },
    async close() {
      state = "closed";
      listeners.clear();
    },
  };
}
