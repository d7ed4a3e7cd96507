import type { Logger } from "pino";
import type { Clock } from "../../src/core/clock.js";
import { GpioError, type GpioPin, type GpioPort } from "./port.js";

/** The part of a johnny-five IO plugin this port uses (johnny-five's IO plugin contract). */
export interface IoPlugin {
  MODES: { INPUT: number; OUTPUT: number; PULLUP?: number };
  pinMode(pin: GpioPin, mode: number): void;
  digitalWrite(pin: GpioPin, value: 0 | 1): void;
  /** Calls `handler` with 0 or 1 on every report of the pin (plugins report on change or periodically). */
  digitalRead(pin: GpioPin, handler: (value: number) => void): void;
}

/**
 * Which IO plugin drives the pins, as the board profile names it:
 * - `firmata`: johnny-five's built-in Firmata over a serial port (an Arduino-class board on USB; StandardFirmata
 *   sketch); `port` null lets johnny-five scan for it (prefer a `/dev/serial/by-id/...` path).
 * - `pi-io`: the Raspberry Pi plugin (`pi-io`, pigpio based; needs the pigpio C library and root or the
 *   gpio group); pins named `"GPIO17"` or by header number. Not a dependency: install it on the device.
 * - `instance`: an IO plugin object built by the caller (a virtual plugin in tests and simulations).
 */
export type IoChoice =
  | { kind: "firmata"; port: string | null }
  | { kind: "pi-io" }
  | { kind: "instance"; plugin: IoPlugin };

export interface JohnnyFiveGpioOptions {
  io: IoChoice;
  clock: Clock;
  /** How long `open` waits for the board's `ready` (ms, default 10,000). */
  readyTimeoutMs?: number;
  logger?: Logger;
}

interface BoardLike {
  io: IoPlugin;
  once(event: string, fn: (arg: unknown) => void): unknown;
  on(event: string, fn: (arg: unknown) => void): unknown;
}

/**
 * A `GpioPort` on johnny-five. johnny-five and the IO plugin are imported in `open`, never at module load,
 * and the board is created without its REPL and without its SIGINT handler (vendd owns the process).
 */
export function createJohnnyFiveGpio(o: JohnnyFiveGpioOptions): GpioPort {
  const inputs = new Map<
    string,
    { pin: GpioPin; pullUp: boolean; level: boolean | null; fns: Set<(h: boolean) => void> }
  >();
  const outputs = new Set<string>();
  let io: IoPlugin | null = null;
  let closed = false;
  let failing = false;

  const configureInput = (plugin: IoPlugin, key: string) => {
    const input = inputs.get(key);
    if (input === undefined) return;
    const pullUp = input.pullUp && plugin.MODES.PULLUP !== undefined;
    if (input.pullUp && !pullUp) o.logger?.warn({ pin: input.pin }, "gpio: plugin has no pull-up; fit one");
    plugin.pinMode(input.pin, pullUp ? (plugin.MODES.PULLUP ?? plugin.MODES.INPUT) : plugin.MODES.INPUT);
    plugin.digitalRead(input.pin, (value) => {
      const high = value !== 0;
      if (closed || input.level === high) return;
      input.level = high;
      for (const fn of [...input.fns]) fn(high);
    });
  };

  return {
    kind: "johnny-five",
    async open() {
      if (closed) throw new GpioError("closed", "gpio open: port is closed");
      const board = await connect(o);
      io = board.io;
      board.on("error", (err) => o.logger?.error({ err }, "gpio: board error"));
      for (const key of inputs.keys()) configureInput(board.io, key);
    },
    write(pin, high) {
      if (io === null || closed) throw new GpioError("closed", "gpio write: port is not open");
      try {
        if (!outputs.has(String(pin))) {
          io.pinMode(pin, io.MODES.OUTPUT);
          outputs.add(String(pin));
        }
        io.digitalWrite(pin, high ? 1 : 0);
        failing = false;
      } catch (err) {
        if (!failing) o.logger?.error({ err, pin }, "gpio: write failed");
        failing = true;
      }
    },
    read: (pin) => inputs.get(String(pin))?.level ?? null,
    onInput(pin, listener, opts) {
      const key = String(pin);
      const known = inputs.get(key);
      const input = known ?? { pin, pullUp: opts?.pullUp ?? false, level: null, fns: new Set() };
      input.fns.add(listener);
      if (known === undefined) {
        inputs.set(key, input);
        if (io !== null) configureInput(io, key);
      }
      return () => {
        input.fns.delete(listener);
      };
    },
    async close() {
      closed = true;
      io = null;
    },
  };
}

async function connect(o: JohnnyFiveGpioOptions): Promise<BoardLike> {
  const five = await load("johnny-five");
  const Board = five.Board;
  if (typeof Board !== "function") throw new GpioError("unavailable", "johnny-five has no Board export");
  const options: Record<string, unknown> = {
    repl: false,
    debug: false,
    sigint: false,
    timeout: o.readyTimeoutMs ?? 10_000,
  };
  switch (o.io.kind) {
    case "firmata":
      if (o.io.port !== null) options.port = o.io.port;
      break;
    case "pi-io": {
      const PiIo = (await load("pi-io")).default;
      if (typeof PiIo !== "function") throw new GpioError("unavailable", "pi-io has no default export");
      options.io = Reflect.construct(PiIo, []);
      break;
    }
    case "instance":
      options.io = o.io.plugin;
      break;
  }
  const board = Reflect.construct(Board, [options]) as BoardLike;
  return new Promise<BoardLike>((resolve, reject) => {
    const timer = o.clock.setTimer(o.readyTimeoutMs ?? 10_000, () =>
      reject(new GpioError("unavailable", "gpio board not ready in time")),
    );
    board.once("ready", () => {
      timer.cancel();
      resolve(board);
    });
    board.once("error", (err) => {
      timer.cancel();
      reject(
        new GpioError("unavailable", `gpio board error: ${err instanceof Error ? err.message : String(err)}`),
      );
    });
  });
}

/** Imports an optional module by name; a missing or broken module becomes `GpioError("unavailable")`. */
async function load(name: "johnny-five" | "pi-io"): Promise<Record<string, unknown>> {
  const specifier: string = name;
  try {
    const mod: unknown = await import(specifier);
    if (typeof mod !== "object" || mod === null) throw new Error("not a module");
    const ns = mod as Record<string, unknown>;
    const cjs = ns.default;
    return typeof cjs === "object" && cjs !== null ? { ...ns, ...(cjs as Record<string, unknown>) } : ns;
  } catch (err) {
    throw new GpioError(
      "unavailable",
      `module ${name} not available: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
