/**
 * Time enters vendd only through a Clock, so that every timeout is an input that tests drive with a
 * ManualClock instead of sleeping. All values are milliseconds.
 */
export interface Timer {
  /** Idempotent; a cancelled timer never fires. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once after `ms` (≥ 0). */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after `ms`; rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const h = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(h) };
  },
  sleep(ms, signal) {
    return sleepWith(systemClock, ms, signal);
  },
};

function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to. Timers fire in time order during `advance`. */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private pending: Pending[] = [];

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const p: Pending = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(p);
    return {
      cancel: () => {
        p.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of timers still armed. */
  get armed(): number {
    return this.pending.filter((p) => !p.cancelled).length;
  }

  /** Moves time forward by `ms`, firing due timers in order (synchronously). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.pending = this.pending.filter((p) => !p.cancelled);
      this.pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.pending[0];
      if (!next || next.at > end) break;
      this.pending.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
  }

  /** Like `advance`, but lets promise continuations run between timers. */
  async advanceAsync(ms: number, step = 1): Promise<void> {
    const end = this.t + ms;
    while (this.t < end) {
      await flushMicrotasks();
      this.advance(Math.min(step, end - this.t));
    }
    await flushMicrotasks();
  }
}

/** Lets already-resolved promise chains run (a few macrotask turns). */
export async function flushMicrotasks(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
}
