import { describe, expect, it } from "vitest";
import {
  createCashlessDialect,
  type HostCmd,
  type MachineInput,
  type MachineState,
  type Reader,
  step,
} from "../../drivers/vmc/adapter/index.js";
import type { VmcEvent } from "../../drivers/vmc/controller.js";

// Transition table of the pure session machine (vending-mdb §1.2, §2.3, §2.4): {start, input, target, events}.
const dialect = createCashlessDialect(2);
const line = (text: string): MachineInput => ({ kind: "line", msg: dialect.parse(text) });
const cmd = (c: HostCmd): MachineInput => ({ kind: "command", cmd: c });
const st = (reader: Reader, pending: HostCmd | null = null): MachineState => ({ reader, pending });

interface Row {
  name: string;
  start: MachineState;
  input: MachineInput;
  target: Reader["s"];
  events?: VmcEvent[];
  send?: HostCmd["kind"];
  settle?: "ok" | "timeout" | "state" | "amount" | "io";
  reconfigure?: boolean;
  warn?: boolean;
}

const VEND = st({ s: "vend", price: 100, item: 2 });
const APPROVED = st({ s: "approved", price: 100, item: 2 });
const rows: Row[] = [
  {
    name: "C,1 pending: INACTIVE is expected",
    start: st({ s: "offline" }, { kind: "switch", enabled: true }),
    input: line("c,STATUS,INACTIVE"),
    target: "inactive",
  },
  {
    name: "c,1 confirms C,1",
    start: st({ s: "inactive" }, { kind: "switch", enabled: true }),
    input: line("c,1"),
    target: "inactive",
    settle: "ok",
  },
  {
    name: "SETUP then ENABLE",
    start: st({ s: "disabled" }),
    input: line("c,STATUS,ENABLED"),
    target: "enabled",
  },
  {
    name: "selection first request",
    start: st({ s: "enabled" }),
    input: line("c,STATUS,VEND,1.00,2"),
    target: "vend",
    events: [{ type: "vendRequested", item: 2, price: 100 }],
  },
  {
    name: "approve exact amount",
    start: VEND,
    input: cmd({ kind: "approve", amount: 100 }),
    target: "approved",
    send: "approve",
  },
  {
    name: "approve other amount refused",
    start: VEND,
    input: cmd({ kind: "approve", amount: 99 }),
    target: "vend",
    settle: "amount",
  },
  {
    name: "approve without request refused",
    start: st({ s: "enabled" }),
    input: cmd({ kind: "approve", amount: 100 }),
    target: "enabled",
    settle: "state",
  },
  {
    name: "ACK confirms approve",
    start: st(APPROVED.reader, { kind: "approve", amount: 100 }),
    input: line("r,ACK"),
    target: "approved",
    settle: "ok",
  },
  {
    name: "success after approval",
    start: APPROVED,
    input: line("c,VEND,SUCCESS"),
    target: "ending",
    events: [{ type: "vendSucceeded", item: 2 }],
  },
  {
    name: "success without approval dropped",
    start: VEND,
    input: line("c,VEND,SUCCESS"),
    target: "vend",
    warn: true,
  },
  {
    name: "VEND 3 after approval",
    start: APPROVED,
    input: line("c,ERR,VEND 3"),
    target: "ending",
    events: [{ type: "vendFailed" }],
  },
  {
    name: "VEND 3 without approval dropped",
    start: st({ s: "idle" }),
    input: line("c,ERR,VEND 3"),
    target: "idle",
    warn: true,
  },
  {
    name: "VEND 1 before approval",
    start: VEND,
    input: line("c,ERR,VEND 1"),
    target: "ending",
    events: [{ type: "vendCancelled" }],
  },
  {
    name: "session complete",
    start: st({ s: "ending" }),
    input: line("c,STATUS,ENABLED"),
    target: "enabled",
    events: [{ type: "sessionEnded" }],
  },
  {
    name: "multi-vend: IDLE keeps the session",
    start: st({ s: "ending" }),
    input: line("c,STATUS,IDLE"),
    target: "idle",
  },
  {
    name: "request in a session",
    start: st({ s: "idle" }),
    input: line("c,STATUS,VEND,2.00,7"),
    target: "vend",
    events: [{ type: "vendRequested", item: 7, price: 200 }],
  },
  {
    name: "second request while one pending dropped",
    start: VEND,
    input: line("c,STATUS,VEND,2.00,7"),
    target: "vend",
    warn: true,
  },
  {
    name: "START from enabled",
    start: st({ s: "enabled" }),
    input: cmd({ kind: "start", funds: 500 }),
    target: "starting",
    send: "start",
  },
  {
    name: "IDLE confirms START",
    start: st({ s: "starting", funds: 500 }, { kind: "start", funds: 500 }),
    input: line("c,STATUS,IDLE,5.00"),
    target: "idle",
    events: [{ type: "sessionStarted", funds: 500 }],
    settle: "ok",
  },
  {
    name: "START refused by the adapter",
    start: st({ s: "starting", funds: 500 }, { kind: "start", funds: 500 }),
    input: line('c,ERR,"START -3"'),
    target: "enabled",
    settle: "state",
  },
  { name: "deny", start: VEND, input: cmd({ kind: "deny" }), target: "denied", send: "deny" },
  {
    name: "IDLE confirms deny",
    start: st({ s: "denied" }, { kind: "deny" }),
    input: line("c,STATUS,IDLE"),
    target: "idle",
    settle: "ok",
  },
  {
    name: "STOP in an idle session",
    start: st({ s: "idle" }),
    input: cmd({ kind: "stop" }),
    target: "stopping",
    send: "stop",
  },
  {
    name: "ENABLED confirms STOP",
    start: st({ s: "stopping" }, { kind: "stop" }),
    input: line("c,STATUS,ENABLED"),
    target: "enabled",
    events: [{ type: "sessionEnded" }],
    settle: "ok",
  },
  {
    name: "return button in a vend: ENABLED",
    start: VEND,
    input: line("c,STATUS,ENABLED"),
    target: "enabled",
    events: [{ type: "vendCancelled" }, { type: "sessionEnded" }],
  },
  {
    name: "unexpected INACTIVE: reset + reconfigure",
    start: APPROVED,
    input: line("c,STATUS,INACTIVE"),
    target: "inactive",
    events: [{ type: "reset", reason: "adapter reported INACTIVE in state approved" }],
    reconfigure: true,
  },
  {
    name: "VEND 5 after approval: reset",
    start: APPROVED,
    input: line("c,ERR,VEND 5"),
    target: "ending",
    events: [{ type: "reset", reason: "reset during vend" }],
  },
  {
    name: "approved vend ends without result: reset",
    start: APPROVED,
    input: line("c,STATUS,IDLE"),
    target: "idle",
    events: [{ type: "reset", reason: "vend ended without a result" }],
  },
  {
    name: "timeout of START rolls back",
    start: st({ s: "starting", funds: 1 }, { kind: "start", funds: 1 }),
    input: { kind: "timeout" },
    target: "enabled",
    settle: "timeout",
  },
  {
    name: "timeout of approve keeps the approval",
    start: st(APPROVED.reader, { kind: "approve", amount: 100 }),
    input: { kind: "timeout" },
    target: "approved",
    settle: "timeout",
  },
  {
    name: "link lost in a vend: reset",
    start: st(APPROVED.reader, { kind: "approve", amount: 100 }),
    input: { kind: "linkLost" },
    target: "offline",
    events: [{ type: "reset", reason: "link lost during a session" }],
    settle: "io",
  },
  {
    name: "SETCONF only while off",
    start: st({ s: "enabled" }),
    input: cmd({ kind: "setconf", key: "a", value: "1" }),
    target: "enabled",
    settle: "state",
  },
  {
    name: "one command at a time",
    start: st({ s: "vend", price: 1, item: 1 }, { kind: "display", text: "x" }),
    input: cmd({ kind: "approve", amount: 1 }),
    target: "vend",
    settle: "state",
  },
  {
    name: "invalid line dropped",
    start: VEND,
    input: line("c,STATUS,VEND,1.001,2"),
    target: "vend",
    warn: true,
  },
];

describe("vmc session machine transitions", () => {
  it.each(rows)("$name", (row) => {
    const s = step(row.start, row.input);
    expect(s.state.reader.s).toBe(row.target);
    expect(s.events).toEqual(row.events ?? []);
    expect(s.send?.kind).toBe(row.send);
    const settle = s.settle === null ? undefined : s.settle.ok ? "ok" : s.settle.code;
    expect(settle).toBe(row.settle);
    expect(s.reconfigure).toBe(row.reconfigure ?? false);
    expect(s.log.some((l) => l.level === "warn")).toBe(row.warn ?? s.log.some((l) => l.level === "warn"));
    if (row.warn) expect(s.state).toEqual(row.start);
  });

  it("is pure: the same input on the same state gives the same step, and the input state is untouched", () => {
    const start = st({ s: "vend", price: 100, item: 2 });
    const copy = structuredClone(start);
    expect(step(start, cmd({ kind: "approve", amount: 100 }))).toEqual(
      step(start, cmd({ kind: "approve", amount: 100 })),
    );
    expect(start).toEqual(copy);
  });
});
