import type { VmcError } from "../controller.js";
import { onLine } from "./machineLines.js";
import type { HostCmd } from "./messages.js";
import {
  fail,
  type MachineInput,
  type MachineState,
  type Reader,
  SESSION_STATES,
  type Step,
  stepOf,
} from "./state.js";

/**
 * The cashless session as the driver tracks it (state.ts): a pure state machine `(state, input) => step`. I/O, timers
 * and promises live in the runner (controller.ts); timeouts and link loss arrive here as inputs. Lines that
 * do not fit the state are logged with the reason and never become events (vending-mdb §2.5 "no
 * correlation ids"). The state has a fixed shape, so its size is bounded whatever arrives.
 */
/** The transition function. Pure: the same state and input always give the same step. */
export function step(state: MachineState, input: MachineInput): Step {
  switch (input.kind) {
    case "line":
      return onLine(state, input.msg);
    case "command":
      return onCommand(state, input.cmd);
    case "timeout":
      return onTimeout(state);
    case "linkLost": {
      const lost = SESSION_STATES.has(state.reader.s);
      return stepOf(
        { reader: { s: "offline" }, pending: null },
        {
          events: lost ? [{ type: "reset", reason: "link lost during a session" }] : [],
          settle: state.pending ? fail("io", "the serial link closed") : null,
          log: [{ level: "warn", msg: `link lost in state ${state.reader.s}` }],
        },
      );
    }
  }
}

function onCommand(state: MachineState, cmd: HostCmd): Step {
  const r = state.reader;
  const refuse = (code: VmcError["code"], message: string) => stepOf(state, { settle: fail(code, message) });
  if (state.pending) return refuse("state", `command ${state.pending.kind} is still waiting for its reply`);
  const accept = (reader: Reader) => stepOf({ reader, pending: cmd }, { send: cmd });
  switch (cmd.kind) {
    case "switch":
      if (cmd.enabled) return r.s === "offline" ? accept(r) : refuse("state", "the reader is already on");
      return ["offline", "inactive", "disabled", "enabled"].includes(r.s)
        ? accept(r)
        : refuse("state", `cannot switch off in state ${r.s}`);
    case "setconf":
      // §2.2: SETCONF only while the cashless function is off.
      return r.s === "offline" ? accept(r) : refuse("state", "configuration needs the reader off");
    case "start":
      return r.s === "enabled"
        ? accept({ s: "starting", funds: cmd.funds })
        : refuse("state", `cannot begin a session in state ${r.s}`);
    case "approve":
      // §1.5 rule 5 [P]: approve exactly the requested amount, and only while a request is pending.
      if (r.s !== "vend") return refuse("state", `no vend request pending (state ${r.s})`);
      if (cmd.amount !== r.price) {
        return refuse("amount", `approval of ${cmd.amount} does not match the requested ${r.price}`);
      }
      return accept({ s: "approved", price: r.price, item: r.item });
    case "deny":
      return r.s === "vend"
        ? accept({ s: "denied" })
        : refuse("state", `no vend request pending (state ${r.s})`);
    case "stop":
      return r.s === "idle" ? accept({ s: "stopping" }) : refuse("state", `no idle session (state ${r.s})`);
    case "display":
      return r.s === "offline" ? refuse("state", "the reader is off") : accept(r);
  }
}

function onTimeout(state: MachineState): Step {
  const p = state.pending;
  if (!p) return stepOf(state);
  const r = state.reader;
  let reader = r;
  // A session that was never confirmed is not ours; an approval or denial may still have reached the VMC,
  // so their states stay and a later outcome line is still read (§1.5 rule 1).
  if (p.kind === "start" && r.s === "starting") reader = { s: "enabled" };
  if (p.kind === "stop" && r.s === "stopping") reader = { s: "idle" };
  return stepOf(
    { reader, pending: null },
    {
      settle: fail("timeout", `no confirmation for ${p.kind}`),
      log: [{ level: "warn", msg: `command ${p.kind} timed out in state ${r.s}` }],
    },
  );
}
