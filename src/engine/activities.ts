import type { Clock, Timer } from "../core/clock.js";
import type { ActivityKey } from "./effects.js";

/**
 * The engine's own running activities: its timers (by session and name), its payment watches (one per
 * session) and the check-in poll. Kept apart so that stopping all of them, on stop or on a failure, is one
 * call that cannot forget one kind.
 */
export class Activities {
  private readonly timers = new Map<string, Timer>();
  private readonly watches = new Map<string, AbortController>();
  private checkin: AbortController | null = null;

  constructor(private readonly clock: Clock) {}

  /** Arms `fn` after `ms` under `key`, replacing a timer armed under the same key. */
  startTimer(key: string, ms: number, fn: () => void): void {
    this.timers.get(key)?.cancel();
    this.timers.set(
      key,
      this.clock.setTimer(ms, () => {
        this.timers.delete(key);
        fn();
      }),
    );
  }

  clearTimer(key: string): void {
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
  }

  /** A new watch of the session's payment (ending the previous one); returns its signal. */
  watch(sessionId: string): AbortSignal {
    this.watches.get(sessionId)?.abort(new Error("replaced"));
    const ac = new AbortController();
    this.watches.set(sessionId, ac);
    return ac.signal;
  }

  stopWatching(sessionId: string): void {
    this.watches.get(sessionId)?.abort(new Error("stopped watching"));
    this.watches.delete(sessionId);
  }

  /** A new check-in poll (ending the previous one); returns its signal. */
  watchCheckin(): AbortSignal {
    this.stopCheckin();
    const ac = new AbortController();
    this.checkin = ac;
    return ac.signal;
  }

  stopCheckin(): void {
    this.checkin?.abort(new Error("stopped"));
    this.checkin = null;
  }

  /** Ends one activity (an effect's `stop`); a timer's key is `sessionId:timer`, as the runner arms it. */
  stop(a: ActivityKey): void {
    if (a.kind === "timer") this.clearTimer(`${a.sessionId}:${a.timer}`);
    else if (a.kind === "paymentWatch") this.stopWatching(a.sessionId);
    else this.stopCheckin();
  }

  /** Cancels every timer and ends every watch and the check-in poll. */
  stopAll(why: string): void {
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    for (const w of this.watches.values()) w.abort(new Error(why));
    this.watches.clear();
    this.stopCheckin();
  }
}
