import type { EmuClock } from "./types.js";

export interface VirtualClockOptions {
  /** Virtual time at creation, ms since the epoch. */
  startTime: number;
  /** Source of real time in ms (default `Date.now`); a frozen function stops virtual time between advances. */
  timeSource?: () => number;
  /** Real-time period of the tick that runs due rules, in ms (default 100; 0 disables the periodic tick). */
  tickMs?: number;
  /**
   * Whether an advance stops at the scheduled times within it (default true). False runs the listeners only
   * at the advance's end: a test affordance for a reference run that lives through time in small steps.
   */
  scheduledStops?: boolean;
}

/** The emulator's clock plus the means to stop its periodic tick. */
export interface VirtualClock extends EmuClock {
  /** Stops the periodic tick; listeners still run on `advance`. */
  stop(): void;
}

/** Upper bound of the stops of one advance (a guard against a source that never runs out of events). */
const MAX_STOPS = 10_000_000;

/**
 * Emulator time (types.ts EmuClock): starts at `startTime`, moves with real time, and jumps forward by every
 * `advance`. Listeners run on each periodic tick and, within an advance, at every scheduled time the
 * registered sources name (in time order, each at its own virtual time) and at the advance's end, so
 * time-based rules (due dates, retries, expiry, auto-capture, inactivity, transfer cut-offs) fire without a
 * request arriving and stamp their own time, however large the jump.
 */
export function createVirtualClock(options: VirtualClockOptions): VirtualClock {
  const real = options.timeSource ?? Date.now;
  const realStart = real();
  let advanced = 0;
  const listeners = new Set<(now: number) => void>();
  const sources = new Set<() => number | null>();

  const now = (): number => options.startTime + (real() - realStart) + advanced;
  const fire = (): void => {
    const t = now();
    for (const listener of [...listeners]) listener(t);
  };
  const nextDue = (): number | null => {
    let min: number | null = null;
    for (const next of sources) {
      const t = next();
      if (t !== null && (min === null || t < min)) min = t;
    }
    return min;
  };
  /** Moves virtual time forward to `t` (never back). */
  const moveTo = (t: number): void => {
    const current = now();
    if (t > current) advanced += t - current;
  };

  const tickMs = options.tickMs ?? 100;
  const interval = tickMs > 0 ? setInterval(fire, tickMs) : null;
  interval?.unref();

  return {
    now,
    advance(ms: number): void {
      if (!Number.isFinite(ms) || ms < 0)
        throw new RangeError(`clock advance must be a finite ms >= 0, got ${ms}`);
      const target = now() + ms;
      let last = Number.NEGATIVE_INFINITY;
      const stops = options.scheduledStops === false ? 0 : MAX_STOPS;
      for (let stop = 0; stop < stops; stop++) {
        const due = nextDue();
        // A time already handled means the source has nothing new: leave it to the end of the jump.
        if (due === null || due > target || due <= last) break;
        moveTo(due);
        last = now();
        fire();
      }
      moveTo(target);
      fire();
    },
    onTick(listener: (now: number) => void): () => void {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    schedule(next: () => number | null): () => void {
      sources.add(next);
      return () => {
        sources.delete(next);
      };
    },
    stop(): void {
      if (interval) clearInterval(interval);
    },
  };
}
