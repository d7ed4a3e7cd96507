import type { Clock } from "../../src/core/clock.js";
import { MAX_PULSE_MS, MIN_PULSE_MS } from "../../src/core/devices.js";
import { GpioError, type GpioPin, type GpioPort } from "./port.js";

export { MAX_PULSE_MS, MIN_PULSE_MS };
/** Most pulses in one train (bounds the loop; a train this long is a configuration mistake). */
export const MAX_PULSES = 1_000;

export interface PulseTiming {
  /** Active time of each pulse (line shorted), ms, 10..10,000. Coin mechanisms use 25-100 ms. */
  widthMs: number;
  /** Inactive time before each pulse (the first one too), ms, 10..10,000. */
  gapMs: number;
  /** True when logic 1 on the pin shorts the line (an open-collector transistor stage); default true. */
  activeHigh?: boolean;
}

export interface PulseTrainOptions extends PulseTiming {
  pin: GpioPin;
  /** Number of pulses, 1..1,000. */
  count: number;
  clock: Clock;
  /** Asked before each pulse: a non-null reason (the machine is inhibited) stops the train before it. */
  hold?: () => string | null;
  /** Aborting stops the train at once and releases the line. */
  signal?: AbortSignal;
}

export interface PulseTrainResult {
  /** Pulses completed (line released after its active time). */
  sent: number;
  /** Why the train stopped early: the `hold` reason or "aborted"; null when all pulses were sent. */
  stopped: string | null;
}

/** Refuses timings a receiver cannot see (vending-mdb §6 [V]). */
export function checkPulseTiming(t: PulseTiming): void {
  for (const [name, ms] of [
    ["widthMs", t.widthMs],
    ["gapMs", t.gapMs],
  ] as const) {
    if (!Number.isInteger(ms) || ms < MIN_PULSE_MS || ms > MAX_PULSE_MS) {
      throw new GpioError("config", `${name} must be an integer from ${MIN_PULSE_MS} to ${MAX_PULSE_MS} ms`);
    }
  }
}

/**
 * Sends `count` pulses, each one `gapMs` inactive then `widthMs` active. The gap precedes the first pulse
 * too, so the receiver always sees a full inactive time first and two trains can never merge; the
 * `hold` check runs after each gap, just before the line goes active. Timing comes only from `clock`.
 * Never leaves the line active: an abort releases it before returning.
 */
export async function pulseTrain(port: GpioPort, o: PulseTrainOptions): Promise<PulseTrainResult> {
  checkPulseTiming(o);
  if (!Number.isInteger(o.count) || o.count < 1 || o.count > MAX_PULSES) {
    throw new GpioError("config", `pulse count must be an integer from 1 to ${MAX_PULSES}`);
  }
  const active = o.activeHigh ?? true;
  let sent = 0;
  try {
    for (let i = 0; i < o.count; i++) {
      await o.clock.sleep(o.gapMs, o.signal);
      const held = o.hold?.() ?? null;
      if (held !== null) return { sent, stopped: held };
      port.write(o.pin, active);
      await o.clock.sleep(o.widthMs, o.signal);
      port.write(o.pin, !active);
      sent++;
    }
    return { sent, stopped: null };
  } catch (err) {
    if (!o.signal?.aborted) throw err;
    port.write(o.pin, !active);
    return { sent, stopped: "aborted" };
  }
}
