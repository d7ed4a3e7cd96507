import { flushMicrotasks, type ManualClock } from "../../../src/core/clock.js";
import type { Subject } from "./subject.js";

type Waits = Pick<Subject, "injectedClock" | "until" | "elapse">;

/**
 * Waiting on an injected clock: nothing moves unless the test advances it, so `until` only lets promise
 * chains and port reads run (bounded by turns, not by time) and `elapse` advances the clock in 10 ms steps.
 */
export function manualWaits(clock: ManualClock): Waits {
  return {
    injectedClock: true,
    async until(check, what) {
      for (let turn = 0; turn < 500; turn++) {
        if (check()) return;
        await flushMicrotasks(1);
      }
      throw new Error(`not reached without the clock moving: ${what}`);
    },
    async elapse(ms) {
      for (let done = 0; done < ms; ) {
        const step = Math.min(10, ms - done);
        clock.advance(step);
        done += step;
        await flushMicrotasks(2);
      }
    },
  };
}

/** Waiting on real I/O (a PTY, a real adapter): polls every 5 ms, bounded by `limitMs`. */
export function realWaits(limitMs: number): Waits {
  return {
    injectedClock: false,
    async until(check, what) {
      const end = Date.now() + limitMs;
      while (!check()) {
        if (Date.now() > end) throw new Error(`not reached within ${limitMs} ms: ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    elapse: (ms) => new Promise((r) => setTimeout(r, ms)),
  };
}
