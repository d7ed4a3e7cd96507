import type { VmcEvent } from "../controller.js";
import type { DeviceMsg, InvalidLine } from "./messages.js";
import { fail, type MachineState, type Reader, type Step, stepOf } from "./state.js";

/**
 * Line transitions of the session machine (vending-mdb §1.2 reader states, §2.3 adapter lines, §2.4
 * example sessions). Every branch either moves the reader along the documented flow or refuses the line
 * with a logged reason; only the documented flow produces events.
 */
export function onLine(state: MachineState, msg: DeviceMsg | InvalidLine): Step {
  const r = state.reader;
  const p = state.pending;
  const reject = (why: string) => outOfSequence(state, msg.kind, why);
  const to = (reader: Reader, events: VmcEvent[] = [], confirms = false) =>
    moveTo(state, reader, events, confirms);

  switch (msg.kind) {
    case "invalid":
      return stepOf(state, { log: [{ level: "warn", msg: `invalid line dropped: ${msg.reason}` }] });
    case "info":
      return stepOf(state, { log: [{ level: "debug", msg: `adapter info: ${msg.text}` }] });
    case "ack":
      // The VMC polled us after the command went out: it has our VEND APPROVED / DISPLAY REQUEST.
      return p?.kind === "approve" || p?.kind === "display" ? to(r, [], true) : stepOf(state);
    case "switched":
      if (p?.kind !== "switch" || p.enabled !== msg.enabled) return reject("no matching C,0/C,1 pending");
      if (!msg.enabled) return to({ s: "offline" }, [], true);
      return to(r.s === "offline" ? { s: "inactive" } : r, [], true);
    case "configured":
      return p?.kind === "setconf" ? to(r, [], true) : reject("no SETCONF pending");
    case "error":
      return onError(state, msg.text);
    case "status":
      return onStatus(state, msg.status);
    case "sessionIdle":
      return onSessionIdle(state, msg.funds);
    case "vendRequest": {
      const vend: Reader = { s: "vend", price: msg.price, item: msg.item };
      const ev: VmcEvent = { type: "vendRequested", item: msg.item, price: msg.price };
      if (r.s === "enabled" || r.s === "idle") return to(vend, [ev]);
      if (r.s === "stopping") {
        return stepOf(
          { reader: vend, pending: null },
          { events: [ev], settle: fail("state", "the VMC sent a vend request before the session ended") },
        );
      }
      return reject("a vend request needs an enabled reader or an idle session");
    }
    case "vendSuccess":
      if (r.s !== "approved") return reject("no approved vend");
      return to(
        { s: "ending" },
        [{ type: "vendSucceeded", item: msg.item ?? r.item }],
        p?.kind === "approve",
      );
    case "vendFailure":
      if (r.s !== "approved") return reject("no approved vend");
      return to({ s: "ending" }, [{ type: "vendFailed" }], p?.kind === "approve");
    case "vendCancel":
      // MDB VEND CANCEL comes only before approval; after ours it crossed it on the bus: nothing was vended.
      if (r.s === "vend") return to({ s: "ending" }, [{ type: "vendCancelled" }]);
      if (r.s === "approved") {
        return stepOf(
          { reader: { s: "ending" }, pending: p?.kind === "approve" ? null : p },
          {
            events: [{ type: "vendCancelled" }],
            settle: p?.kind === "approve" ? fail("state", "the VMC cancelled the vend") : null,
          },
        );
      }
      if (r.s === "denied") return to({ s: "ending" }, [], p?.kind === "deny");
      return reject("no vend to cancel");
    case "vendReset":
      if (r.s === "approved") {
        return to({ s: "ending" }, [{ type: "reset", reason: "reset during vend" }], p?.kind === "approve");
      }
      if (r.s === "vend") return to({ s: "ending" }, [{ type: "vendCancelled" }]);
      return reject("no vend to reset");
  }
}

/** A line that does not fit the reader's state: logged, nothing changes. */
function outOfSequence(state: MachineState, kind: string, why: string): Step {
  return stepOf(state, {
    log: [{ level: "warn", msg: `out of sequence: ${kind} in state ${state.reader.s}: ${why}` }],
  });
}

/** The reader moves to `reader` with `events`; `confirms` settles the pending command as done. */
function moveTo(state: MachineState, reader: Reader, events: VmcEvent[] = [], confirms = false): Step {
  const p = state.pending;
  return stepOf({ reader, pending: confirms ? null : p }, { events, settle: confirms ? { ok: true } : null });
}

/** `c,STATUS,IDLE[,funds]`: a session began, or the VMC is back at idle within one. */
function onSessionIdle(state: MachineState, msgFunds: number | null): Step {
  const r = state.reader;
  const p = state.pending;
  const reject = (why: string) => outOfSequence(state, "sessionIdle", why);
  const to = (reader: Reader, events: VmcEvent[] = [], confirms = false) =>
    moveTo(state, reader, events, confirms);
  switch (r.s) {
    case "starting": {
      const funds = msgFunds ?? r.funds;
      const log =
        funds === r.funds
          ? []
          : [{ level: "warn" as const, msg: `session funds ${funds} != offered ${r.funds}` }];
      const s = to({ s: "idle" }, [{ type: "sessionStarted", funds }], p?.kind === "start");
      return { ...s, log };
    }
    case "idle":
    case "stopping":
      return stepOf(state);
    case "vend":
      // §3: the VMC left the vend before approval.
      return to({ s: "idle" }, [{ type: "vendCancelled" }]);
    case "approved":
      // §1.5 rule 1: an approved vend that ends without a result counts as unknown.
      return to(
        { s: "idle" },
        [{ type: "reset", reason: "vend ended without a result" }],
        p?.kind === "approve",
      );
    case "denied":
      return to({ s: "idle" }, [], p?.kind === "deny");
    case "ending":
      return to({ s: "idle" });
    default:
      return reject("no session was begun");
  }
}

function onStatus(state: MachineState, status: "inactive" | "disabled" | "enabled"): Step {
  const r = state.reader;
  const p = state.pending;
  const reject = (why: string) =>
    stepOf(state, {
      log: [{ level: "warn", msg: `out of sequence: status ${status} in state ${r.s}: ${why}` }],
    });
  if (status === "inactive") {
    if (p?.kind === "switch") return stepOf({ reader: p.enabled ? { s: "inactive" } : r, pending: p });
    if (r.s === "inactive") return stepOf(state);
    if (r.s === "offline") return reject("the cashless function is off");
    // §2.5: INACTIVE without our C,1 means the adapter or the VMC reset: reconfigure (§1.5 rule 1 applies).
    return stepOf(
      { reader: { s: "inactive" }, pending: null },
      {
        events: [{ type: "reset", reason: `adapter reported INACTIVE in state ${r.s}` }],
        settle: p ? (p.kind === "approve" ? { ok: true } : fail("state", "the adapter reset")) : null,
        reconfigure: true,
        log: [{ level: "warn", msg: `unexpected INACTIVE in state ${r.s}: reconfiguring` }],
      },
    );
  }
  if (status === "disabled") {
    return ["inactive", "disabled", "enabled"].includes(r.s)
      ? stepOf({ reader: { s: "disabled" }, pending: p })
      : reject("READER DISABLE only outside a session");
  }
  const ended: VmcEvent = { type: "sessionEnded" };
  const toEnabled = (events: VmcEvent[], confirms: boolean) =>
    stepOf(
      { reader: { s: "enabled" }, pending: confirms ? null : p },
      { events, settle: confirms ? { ok: true } : null },
    );
  switch (r.s) {
    case "inactive":
    case "disabled":
    case "enabled":
      return toEnabled([], false);
    case "starting":
      // VMCs re-send READER ENABLE (vending-mdb §7); the session offer stays open.
      return stepOf(state, { log: [{ level: "debug", msg: "ENABLED while beginning a session" }] });
    case "idle":
    case "ending":
      return toEnabled([ended], false);
    case "stopping":
      return toEnabled([ended], p?.kind === "stop");
    case "vend":
      return toEnabled([{ type: "vendCancelled" }, ended], false);
    case "approved":
      return toEnabled(
        [{ type: "reset", reason: "vend ended without a result" }, ended],
        p?.kind === "approve",
      );
    case "denied":
      return toEnabled([ended], p?.kind === "deny");
    case "offline":
      return reject("the cashless function is off");
  }
}

function onError(state: MachineState, text: string): Step {
  const r = state.reader;
  const p = state.pending;
  if (!p) return stepOf(state, { log: [{ level: "info", msg: `adapter error: ${text}` }] });
  const settle = fail("state", `adapter refused ${p.kind}: ${text}`);
  let reader = r;
  const events: VmcEvent[] = [];
  if (p.kind === "start" && r.s === "starting") reader = { s: "enabled" };
  if (p.kind === "stop" && r.s === "stopping") reader = { s: "idle" };
  if (p.kind === "approve" && r.s === "approved") {
    // The adapter says there is no vend to approve: the request is gone and nothing was vended.
    reader = { s: "ending" };
    events.push({ type: "vendCancelled" });
  }
  if (p.kind === "deny" && r.s === "denied") reader = { s: "ending" };
  const log = [{ level: "warn" as const, msg: `adapter refused ${p.kind}: ${text}` }];
  return stepOf({ reader, pending: null }, { settle, events, log });
}
