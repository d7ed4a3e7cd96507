import type { EmuClock } from "./types.js";

export interface VirtualClockOptions {
  /** Virtual time at creation, ms since the epoch. */
  startTime: number;
  /** Source of real time in ms (default `Date.now`); a frozen function stops virtual time between advances. */
  timeSource?: () => number;
  /** Real-time period of the tick that runs due rules, in ms (default 100; 0 disables the periodic tick). */
  tickMs?: number;
}

/** The emulator's clock plus the means to stop its periodic tick. */
export interface VirtualClock extends EmuClock {
  /** Stops the periodic tick; listeners still run on `advance`. */
  stop(): void;
}

/**
 * Emulator time (types.ts EmuClock): starts at `startTime`, moves with real time, and jumps forward by every
 * `advance`. Listeners run after each advance and on each periodic tick, so time-based rules (expiry,
 * auto-capture, inactivity) fire without a request arriving.
 */
export function createVirtualClock(options: VirtualClockOptions): VirtualClock {
  const real = options.timeSource ?? Date.now;
  const realStart = real();
  let advanced = 0;
  const listeners = new Set<(now: number) => void>();

  const now = (): number => options.startTime + (real() - realStart) + advanced;
  const fire = (): void => {
    const t = now();
    for (const listener of [...listeners]) listener(t);
  };

  const tickMs = options.tickMs ?? 100;
  const interval = tickMs > 0 ? setInterval(fire, tickMs) : null;
  interval?.unref();

  return {
    now,
    advance(ms: number): void {
      if (!Number.isFinite(ms) || ms < 0)
        throw new RangeError(`clock advance must be a finite ms >= 0, got ${ms}`);
      advanced += ms;
      fire();
    },
    onTick(listener: (now: number) => void): () => void {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    stop(): void {
      if (interval) clearInterval(interval);
    },
  };
}
