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

/** The controller's state and what its parts share. */
interface Pulse {
  readonly o: PulseControllerOptions;
  readonly count: number;
  readonly listeners: Set<(e: VmcEvent) => void>;
  readonly unsubscribe: (() => void)[];
  state: State;
}

function emit(p: Pulse, e: VmcEvent): void {
  for (const l of [...p.listeners]) l(e);
}

function fail(p: Pulse, what: string): never {
  throw new VmcError(p.state.s === "closed" ? "closed" : "state", `${what} refused in state ${p.state.s}`);
}

function inhibited(p: Pulse): boolean {
  const { o } = p;
  if (o.inhibitPin === null) return false;
  const level = o.gpio.read(o.inhibitPin);
  return level !== null && level === (o.inhibitActiveHigh ?? false);
}

function request(p: Pulse, funds: Minor | null): void {
  p.state = { s: "requested", funds };
  emit(p, { type: "vendRequested", item: PULSE_ITEM, price: p.o.price });
}

function onStart(p: Pulse, high: boolean): void {
  if (high || inhibited(p)) return;
  if (p.state.s === "idle") request(p, null);
  else if (p.state.s === "session") request(p, p.state.funds);
}

function onInhibit(p: Pulse): void {
  const { o } = p;
  if (!inhibited(p)) return;
  o.logger?.info({ state: p.state.s }, "pulse: machine inhibited");
  if (p.state.s === "requested") {
    const inSession = p.state.funds !== null;
    p.state = { s: "idle" };
    emit(p, { type: "vendCancelled" });
    if (inSession) emit(p, { type: "sessionEnded" });
  } else if (p.state.s === "session") {
    p.state = { s: "idle" };
    emit(p, { type: "sessionEnded" });
  }
}

async function runTrain(p: Pulse, inSession: boolean, abort: AbortController): Promise<void> {
  const { o, count } = p;
  let outcome: VmcEvent;
  try {
    const r = await pulseTrain(o.gpio, {
      ...o.timing,
      pin: o.pulsePin,
      count,
      clock: o.clock,
      signal: abort.signal,
      hold: () => (inhibited(p) ? "inhibited" : null),
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
  if (p.state.s !== "closed") p.state = { s: "idle" };
  emit(p, outcome);
  if (inSession && outcome.type !== "reset") emit(p, { type: "sessionEnded" });
}

async function openPulse(p: Pulse): Promise<void> {
  const { o, unsubscribe } = p;
  // Idempotent like the other controllers: a second open leaves an open controller enabled.
  if (p.state.s === "disabled") p.state = { s: "idle" };
  if (p.state.s !== "new") {
    if (p.state.s === "closed") fail(p, "open");
    return;
  }
  await o.gpio.open();
  const active = !(o.timing.activeHigh ?? true);
  o.gpio.write(o.pulsePin, active);
  if (o.inhibitPin !== null)
    unsubscribe.push(o.gpio.onInput(o.inhibitPin, () => onInhibit(p), { pullUp: true }));
  if (o.startPin !== null)
    unsubscribe.push(o.gpio.onInput(o.startPin, (high) => onStart(p, high), { pullUp: true }));
  p.state = { s: "idle" };
  emit(p, { type: "link", up: true });
}

async function setPulseEnabled(p: Pulse, enabled: boolean): Promise<void> {
  if (enabled) {
    if (p.state.s === "disabled") p.state = { s: "idle" };
    else if (p.state.s === "new" || p.state.s === "closed") fail(p, "enable");
    return;
  }
  if (p.state.s === "pulsing" || p.state.s === "new" || p.state.s === "closed") fail(p, "disable");
  const before = p.state;
  p.state = { s: "disabled" };
  if (before.s === "requested") emit(p, { type: "vendCancelled" });
  if (before.s === "session" || (before.s === "requested" && before.funds !== null)) {
    emit(p, { type: "sessionEnded" });
  }
}

async function beginPulseSession(p: Pulse, funds: Minor): Promise<void> {
  const { o } = p;
  if (p.state.s !== "idle" || inhibited(p))
    fail(p, inhibited(p) ? "beginSession (inhibited)" : "beginSession");
  if (!Number.isSafeInteger(funds) || funds < 0) throw new VmcError("amount", `invalid funds ${funds}`);
  if (funds < o.price) throw new VmcError("amount", `funds ${funds} below the machine's price ${o.price}`);
  p.state = { s: "session", funds };
  emit(p, { type: "sessionStarted", funds });
  if (o.requestOnSession) request(p, funds);
}

async function approvePulseVend(p: Pulse, amount: Minor): Promise<void> {
  const { o } = p;
  if (p.state.s !== "requested") return fail(p, "approveVend");
  // vending-mdb §1.5 rule 5 (and controller.ts): never approve an amount other than the one requested.
  if (amount !== o.price) throw new VmcError("amount", `approve ${amount} but the request is ${o.price}`);
  const abort = new AbortController();
  const inSession = p.state.funds !== null;
  p.state = { s: "pulsing", funds: p.state.funds, abort, done: runTrain(p, inSession, abort) };
}

async function closePulse(p: Pulse): Promise<void> {
  const { o, unsubscribe } = p;
  if (p.state.s === "closed") return;
  const train = p.state.s === "pulsing" ? p.state : null;
  p.state = { s: "closed" };
  if (train !== null) {
    // Stop the train and let it release the line before the port goes away.
    train.abort.abort(new VmcError("closed", "controller closed"));
    await train.done;
  }
  for (const u of unsubscribe.splice(0)) u();
  await o.gpio.close();
}

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
  const p: Pulse = { o, count: pulsesPerVend(o), listeners: new Set(), unsubscribe: [], state: { s: "new" } };
  const { listeners } = p;
  return {
    kind: "pulse",
    open: () => openPulse(p),
    setEnabled: (enabled) => setPulseEnabled(p, enabled),
    beginSession: (funds) => beginPulseSession(p, funds),
    approveVend: (amount) => approvePulseVend(p, amount),
    async denyVend() {
      if (p.state.s !== "requested") return fail(p, "denyVend");
      p.state = p.state.funds === null ? { s: "idle" } : { s: "session", funds: p.state.funds };
    },
    async endSession() {
      if (p.state.s !== "session") return fail(p, "endSession");
      p.state = { s: "idle" };
      emit(p, { type: "sessionEnded" });
    },
    async displayText() {
      // No display to borrow; a closed controller still refuses, like every other command.
      if (p.state.s === "closed") fail(p, "displayText");
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    close: () => closePulse(p),
  };
}
