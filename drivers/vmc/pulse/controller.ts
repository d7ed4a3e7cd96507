import type { Minor } from "../../../src/core/money.js";
import { pulseTrain } from "../../gpio/pulse.js";
import { type VendController, VmcError, type VmcEvent } from "../controller.js";
import { PULSE_ITEM, type PulseControllerOptions, pulsesPerVend } from "./options.js";

type State =
  | { s: "new" }
  | { s: "disabled" }
  | { s: "idle" }
  | { s: "session"; funds: Minor }
  /** `funds` is the open session's funds, null for a request outside a session (selection first). */
  | { s: "requested"; funds: Minor | null }
  | { s: "pulsing"; funds: Minor | null; abort: AbortController; done: Promise<void> }
  | { s: "closed" };

/**
 * A `VendController` for machines credited by pulses (washers, dryers, car-wash bays: vending-mdb §6).
 *
 * How a vend is requested: such machines report no selection, so the machine has one configured price and
 * one item (`PULSE_ITEM`). A press of the customer's start button, while enabled, not inhibited and with
 * no vend under way, is the selection: the controller emits `vendRequested { item: 1, price }`, which
 * the engine handles like an MDB selection-first request (pay, then `approveVend(price)`). In the
 * engine's check-in flow, `beginSession(funds)` emits `sessionStarted` and then waits for the button, or,
 * with `requestOnSession`, requests the vend at once.
 *
 * Approve = send `price / valuePerPulse` pulses with the configured timing, each after an inactive gap,
 * so a vend takes count × (gapMs + widthMs). `approveVend` resolves once the train is scheduled (the
 * engine journals the approval before calling it, and the outcome event marks the end). Outcomes:
 * - the train completes → `vendSucceeded` (then `sessionEnded` when a session was open: single vend);
 * - the machine is inhibited before the first pulse → `vendFailed` (the engine cancels the payment);
 * - inhibited or closed after some pulses → `reset` (unknown outcome: the engine's MDB §7.4.7 policy,
 *   capture and flag for review, as vending-mdb §6 asks for a crash mid-train);
 * - inhibited while a request waits for approval → `vendCancelled`; while in a session → `sessionEnded`.
 * While inhibited the controller takes no request and sends no pulse. `displayText` does nothing (it only
 * refuses once closed): pulse machines have no display to borrow. The optional "running" input is not used.
 */
export function createPulseController(o: PulseControllerOptions): VendController {
  const count = pulsesPerVend(o);
  const listeners = new Set<(e: VmcEvent) => void>();
  const unsubscribe: (() => void)[] = [];
  let state: State = { s: "new" };

  const emit = (e: VmcEvent) => {
    for (const l of [...listeners]) l(e);
  };
  const fail = (what: string): never => {
    throw new VmcError(state.s === "closed" ? "closed" : "state", `${what} refused in state ${state.s}`);
  };
  const inhibited = (): boolean => {
    if (o.inhibitPin === null) return false;
    const level = o.gpio.read(o.inhibitPin);
    return level !== null && level === (o.inhibitActiveHigh ?? false);
  };
  const request = (funds: Minor | null) => {
    state = { s: "requested", funds };
    emit({ type: "vendRequested", item: PULSE_ITEM, price: o.price });
  };

  const onStart = (high: boolean) => {
    if (high || inhibited()) return;
    if (state.s === "idle") request(null);
    else if (state.s === "session") request(state.funds);
  };

  const onInhibit = () => {
    if (!inhibited()) return;
    o.logger?.info({ state: state.s }, "pulse: machine inhibited");
    if (state.s === "requested") {
      const inSession = state.funds !== null;
      state = { s: "idle" };
      emit({ type: "vendCancelled" });
      if (inSession) emit({ type: "sessionEnded" });
    } else if (state.s === "session") {
      state = { s: "idle" };
      emit({ type: "sessionEnded" });
    }
  };

  async function runTrain(inSession: boolean, abort: AbortController): Promise<void> {
    let outcome: VmcEvent;
    try {
      const r = await pulseTrain(o.gpio, {
        ...o.timing,
        pin: o.pulsePin,
        count,
        clock: o.clock,
        signal: abort.signal,
        hold: () => (inhibited() ? "inhibited" : null),
      });
      if (r.stopped === null) outcome = { type: "vendSucceeded", item: PULSE_ITEM };
      else if (r.sent === 0) outcome = { type: "vendFailed" };
      else
        outcome = { type: "reset", reason: `pulse train stopped (${r.stopped}) after ${r.sent} of ${count}` };
      o.logger?.info({ sent: r.sent, count, stopped: r.stopped }, "pulse: train finished");
    } catch (err) {
      o.logger?.error({ err }, "pulse: train failed");
      outcome = { type: "reset", reason: "pulse output failed during the train" };
    }
    if (state.s !== "closed") state = { s: "idle" };
    emit(outcome);
    if (inSession && outcome.type !== "reset") emit({ type: "sessionEnded" });
  }

  return {
    kind: "pulse",
    async open() {
      // Idempotent like the other controllers: a second open leaves an open controller enabled.
      if (state.s === "disabled") state = { s: "idle" };
      if (state.s !== "new") {
        if (state.s === "closed") fail("open");
        return;
      }
      await o.gpio.open();
      const active = !(o.timing.activeHigh ?? true);
      o.gpio.write(o.pulsePin, active);
      if (o.inhibitPin !== null) unsubscribe.push(o.gpio.onInput(o.inhibitPin, onInhibit, { pullUp: true }));
      if (o.startPin !== null) unsubscribe.push(o.gpio.onInput(o.startPin, onStart, { pullUp: true }));
      state = { s: "idle" };
      emit({ type: "link", up: true });
    },
    async setEnabled(enabled) {
      if (enabled) {
        if (state.s === "disabled") state = { s: "idle" };
        else if (state.s === "new" || state.s === "closed") fail("enable");
        return;
      }
      if (state.s === "pulsing" || state.s === "new" || state.s === "closed") fail("disable");
      const before = state;
      state = { s: "disabled" };
      if (before.s === "requested") emit({ type: "vendCancelled" });
      if (before.s === "session" || (before.s === "requested" && before.funds !== null)) {
        emit({ type: "sessionEnded" });
      }
    },
    async beginSession(funds) {
      if (state.s !== "idle" || inhibited()) fail(inhibited() ? "beginSession (inhibited)" : "beginSession");
      if (!Number.isSafeInteger(funds) || funds < 0) throw new VmcError("amount", `invalid funds ${funds}`);
      if (funds < o.price)
        throw new VmcError("amount", `funds ${funds} below the machine's price ${o.price}`);
      state = { s: "session", funds };
      emit({ type: "sessionStarted", funds });
      if (o.requestOnSession) request(funds);
    },
    async approveVend(amount) {
      if (state.s !== "requested") return fail("approveVend");
      // vending-mdb §1.5 rule 5 (and controller.ts): never approve an amount other than the one requested.
      if (amount !== o.price) throw new VmcError("amount", `approve ${amount} but the request is ${o.price}`);
      const abort = new AbortController();
      const inSession = state.funds !== null;
      state = { s: "pulsing", funds: state.funds, abort, done: runTrain(inSession, abort) };
    },
    async denyVend() {
      if (state.s !== "requested") return fail("denyVend");
      state = state.funds === null ? { s: "idle" } : { s: "session", funds: state.funds };
    },
    async endSession() {
      if (state.s !== "session") return fail("endSession");
      state = { s: "idle" };
      emit({ type: "sessionEnded" });
    },
    async displayText() {
      // No display to borrow; a closed controller still refuses, like every other command.
      if (state.s === "closed") fail("displayText");
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      if (state.s === "closed") return;
      const train = state.s === "pulsing" ? state : null;
      state = { s: "closed" };
      if (train !== null) {
        // Stop the train and let it release the line before the port goes away.
        train.abort.abort(new VmcError("closed", "controller closed"));
        await train.done;
      }
      for (const u of unsubscribe.splice(0)) u();
      await o.gpio.close();
    },
  };
}
