import type { Clock, Timer } from "../../src/core/clock.js";
import type { GpioPin, GpioPort } from "./port.js";

/** What the status LED says: steady on, slow blink (1 Hz), fast blink (4 Hz) or off. */
export type PanelStatus = "ready" | "busy" | "fault" | "off";

export interface PanelOptions {
  /** An opened port (the panel does not open or close it). */
  gpio: GpioPort;
  clock: Clock;
  /** Pins from the board profile; null when not fitted. */
  pins: { statusLed: GpioPin | null; serviceButton: GpioPin | null; doorSwitch: GpioPin | null };
  /** A level must hold this long before it counts (ms, default 50): contact bounce is ignored. */
  debounceMs?: number;
}

/**
 * The unit's own controls: a status LED, the technician's service button (a switch to ground with the
 * pull-up on: pressed = low) and the door switch (closed door pulls the input low: open = high).
 */
export interface Panel {
  setStatus(status: PanelStatus): void;
  /** Calls `fn` once per debounced press; returns the unsubscribe function. */
  onServiceButton(fn: () => void): () => void;
  /** Calls `fn` with true when the door opens and false when it closes (debounced). */
  onDoor(fn: (open: boolean) => void): () => void;
  /** The debounced door state, or null before the switch has reported. */
  doorOpen(): boolean | null;
  /** Stops blinking, turns the LED off and drops the input listeners. */
  close(): void;
}

const BLINK_MS: Record<PanelStatus, number | null> = { ready: null, busy: 500, fault: 125, off: null };

export function createPanel(o: PanelOptions): Panel {
  const debounceMs = o.debounceMs ?? 50;
  const buttonFns = new Set<() => void>();
  const doorFns = new Set<(open: boolean) => void>();
  const offs: (() => void)[] = [];
  let blink: Timer | null = null;
  let door: boolean | null = null;

  const led = (on: boolean) => {
    if (o.pins.statusLed !== null) o.gpio.write(o.pins.statusLed, on);
  };
  const stopBlink = () => {
    blink?.cancel();
    blink = null;
  };

  /** Reports a level only after it held for `debounceMs`. */
  const debounced = (pin: GpioPin, onStable: (high: boolean) => void) => {
    let stable: boolean | null = null;
    let timer: Timer | null = null;
    offs.push(() => timer?.cancel());
    offs.push(
      o.gpio.onInput(
        pin,
        () => {
          timer?.cancel();
          timer = o.clock.setTimer(debounceMs, () => {
            const level = o.gpio.read(pin);
            if (level === null || level === stable) return;
            stable = level;
            onStable(level);
          });
        },
        { pullUp: true },
      ),
    );
    stable = o.gpio.read(pin);
    return stable;
  };

  if (o.pins.serviceButton !== null) {
    debounced(o.pins.serviceButton, (high) => {
      if (!high) for (const fn of [...buttonFns]) fn();
    });
  }
  if (o.pins.doorSwitch !== null) {
    door = debounced(o.pins.doorSwitch, (high) => {
      door = high;
      for (const fn of [...doorFns]) fn(high);
    });
  }

  return {
    setStatus(status) {
      stopBlink();
      const period = BLINK_MS[status];
      if (period === null) {
        led(status === "ready");
        return;
      }
      let on = true;
      const tick = () => {
        led(on);
        on = !on;
        blink = o.clock.setTimer(period, tick);
      };
      tick();
    },
    onServiceButton(fn) {
      buttonFns.add(fn);
      return () => {
        buttonFns.delete(fn);
      };
    },
    onDoor(fn) {
      doorFns.add(fn);
      return () => {
        doorFns.delete(fn);
      };
    },
    doorOpen: () => door,
    close() {
      stopBlink();
      for (const off of offs.splice(0)) off();
      buttonFns.clear();
      doorFns.clear();
      led(false);
    },
  };
}
