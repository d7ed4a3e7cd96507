import type { Logger } from "pino";
import type { Clock, Timer } from "../core/clock.js";
import type { PaymentDriver } from "../payment/driver.js";
import type { Activity, ActivityKey } from "./effects.js";
import { pollCheckin, pollPayment } from "./paymentPolls.js";
import type { EngineInput } from "./types.js";

/** Where the activities report (the runner). */
export interface ActivitySink {
  dispatch(input: EngineInput): void;
  /** A payment watch: in flight until it ends (awaited by whenIdle and stop). */
  track(p: Promise<unknown>): void;
  /** The check-in poll: an observation, not a mutation (awaited by stop only). */
  observe(p: Promise<unknown>): void;
}

/**
 * The engine's own running activities: its timers (by session and name), its payment watches (one per
 * session) and the check-in poll. Kept apart so that stopping all of them, on stop or on a failure, is one
 * call that cannot forget one kind.
 */
export class Activities {
  private readonly timers = new Map<string, Timer>();
  private readonly watches = new Map<string, AbortController>();
  private checkin: AbortController | null = null;

  constructor(
    private readonly deps: { payment: PaymentDriver; clock: Clock; logger: Logger; random: () => number },
    private readonly sink: ActivitySink,
  ) {}

  /** Starts one activity (an effect's `start`); its expiry or observations come back as inputs. */
  start(a: Activity): void {
    const { sink } = this;
    switch (a.kind) {
      case "timer": {
        const { sessionId, timer } = a;
        this.startTimer(`${sessionId}:${timer}`, a.ms, () =>
          sink.dispatch({ type: "timeout", sessionId, timer }),
        );
        return;
      }
      case "paymentWatch": {
        const { sessionId } = a;
        const signal = this.watch(sessionId);
        sink.track(
          pollPayment(this.deps, a.ref, signal, (observation) =>
            sink.dispatch({ type: "paymentUpdate", sessionId, observation }),
          ),
        );
        return;
      }
      case "checkinPoll":
        sink.observe(pollCheckin(this.deps, this.watchCheckin(), () => sink.dispatch({ type: "checkedIn" })));
        return;
    }
  }

  /** Arms `fn` after `ms` under `key`, replacing a timer armed under the same key. */
  startTimer(key: string, ms: number, fn: () => void): void {
    this.timers.get(key)?.cancel();
    this.timers.set(
      key,
      this.deps.clock.setTimer(ms, () => {
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
