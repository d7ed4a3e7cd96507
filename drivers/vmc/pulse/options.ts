import type { Logger } from "pino";
import type { Clock } from "../../../src/core/clock.js";
import { assertMinor, type Minor } from "../../../src/core/money.js";
import type { GpioPin, GpioPort } from "../../gpio/port.js";
import { checkPulseTiming, MAX_PULSES, type PulseTiming } from "../../gpio/pulse.js";
import { VmcError } from "../controller.js";

/** The one "selection" a pulse machine has: vendd reports every vend as this item number. */
export const PULSE_ITEM = 1;

export interface PulseControllerOptions {
  /** The GPIO port carrying the pulse output and the inputs (opened and closed by the controller). */
  gpio: GpioPort;
  clock: Clock;
  /** Output driving the isolated pulse stage (transistor or relay; never wire a GPIO to the machine). */
  pulsePin: GpioPin;
  /** Pulse active time, inactive gap (ms) and output polarity (vending-mdb §6). */
  timing: PulseTiming;
  /** The machine's single price in minor units: one vend = `price / valuePerPulse` pulses. */
  price: Minor;
  /** Credit one pulse gives the machine, in minor units; `price` must be a whole multiple of it. */
  valuePerPulse: Minor;
  /** The machine's inhibit/busy output, or null when not wired. */
  inhibitPin: GpioPin | null;
  /** True when a high level means inhibited; default false (opto-coupler pulling a pull-up input low). */
  inhibitActiveHigh?: boolean;
  /** The customer's start button (a switch to ground with the pull-up on), or null when not wired. */
  startPin: GpioPin | null;
  /**
   * When true, `beginSession` (the engine's check-in flow) requests the vend at once, without a start
   * button press. Default false: a session waits for the start button like an MDB session waits for a
   * selection.
   */
  requestOnSession?: boolean;
  logger?: Logger;
}

/** Checks the options and returns the number of pulses one vend sends. */
export function pulsesPerVend(o: PulseControllerOptions): number {
  checkPulseTiming(o.timing);
  assertMinor(o.price);
  assertMinor(o.valuePerPulse);
  if (o.valuePerPulse === 0 || o.price === 0) {
    throw new VmcError("amount", "price and valuePerPulse must be above zero");
  }
  // vending-mdb §6: pulses = price ÷ value per pulse, and the price must divide evenly.
  if (o.price % o.valuePerPulse !== 0) {
    throw new VmcError("amount", `price ${o.price} is not a whole number of pulses of ${o.valuePerPulse}`);
  }
  const n = o.price / o.valuePerPulse;
  if (n > MAX_PULSES) throw new VmcError("amount", `a vend would need ${n} pulses (at most ${MAX_PULSES})`);
  return n;
}
