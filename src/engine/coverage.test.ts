import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as checkin from "./checkin.test-support.js";
import { transition } from "./machine.js";
import { rows as machineRows } from "./machine.rows.test-support.js";
import { rows as planRows, planVending } from "./plan.rows.test-support.js";
import * as selection from "./selection.test-support.js";
import { rows as sessionRows } from "./session.rows.test-support.js";
import { rows as sessionVendRows } from "./session-vend.rows.test-support.js";
import type { Row } from "./table.test-support.js";
import type { EngineContext, EngineInput, EngineState, Transition } from "./types.js";
import { rows as vendingRows } from "./vending.rows.test-support.js";

/**
 * Completeness of the transition tables: every state tag × every input type of types.ts is either covered by
 * a row of the tables (machine.test.ts, vending.test.ts, session.test.ts, session-vend.test.ts) or, for
 * every representative of the pair, explicitly ignored (`ignored` effects only) or a documented deny (a
 * vend request that never becomes a session: exactly one `denyVend` with no session id). So a new state or
 * input type, or a behaviour nobody wrote a row for, fails here.
 */

/** Every row of the tables, as data. */
const tables: readonly Row[] = [
  ...machineRows,
  ...vendingRows,
  ...sessionRows,
  ...sessionVendRows,
  ...planRows,
];

type Tag = EngineState["tag"];
type InputType = EngineInput["type"];
interface Rep {
  state: EngineState;
  ctx: EngineContext;
}

/** Representative states of each tag, in the flows they occur in. A Record: a new tag fails typecheck. */
const STATES: Record<Tag, Rep[]> = {
  idle: [{ state: { tag: "idle" }, ctx: selection.ctx }],
  ready: [
    { state: { tag: "ready", allocating: false }, ctx: checkin.ctx },
    { state: { tag: "ready", allocating: true }, ctx: { ...checkin.ctx, checkinMode: "idlePayment" } },
  ],
  paying: [
    { state: selection.paying(), ctx: selection.ctx },
    { state: selection.payingRef({ issued: true }), ctx: selection.ctx },
    { state: checkin.paying(), ctx: checkin.ctx },
  ],
  vending: [{ state: selection.vending, ctx: selection.ctx }],
  planVending: [{ state: planVending, ctx: selection.ctx }],
  session: [{ state: checkin.inSession(), ctx: checkin.ctx }],
  sessionVending: [{ state: checkin.vendingIn(), ctx: checkin.ctx }],
  settling: [
    { state: selection.settling("capture"), ctx: selection.ctx },
    { state: checkin.settlingOf("cancel"), ctx: checkin.ctx },
  ],
};

/** Both support files use the same session id, so inputs of "this" session match every state above. */
const SID = selection.S.id;
const REF = selection.R;

/** Representative inputs of each type, carrying the session's own id (never filtered as another's). */
const INPUTS: Record<InputType, EngineInput[]> = {
  vendRequested: [selection.vendRequested(), selection.otherVend],
  checkedIn: [{ type: "checkedIn" }],
  sessionAllocated: [{ type: "sessionAllocated", sessionId: "s2", orderId: "vm-1-00002-abcd" }],
  sessionEnded: [{ type: "sessionEnded" }],
  paymentStarted: [{ type: "paymentStarted", sessionId: SID, ref: REF }],
  paymentStartFailed: [
    { type: "paymentStartFailed", sessionId: SID, reason: "refused", unresolved: false },
    { type: "paymentStartFailed", sessionId: SID, reason: "unknown", unresolved: true },
  ],
  paymentUpdate: ["issued", "reserved", "captured", "cancelled", "expired", "failed"].map((st) =>
    selection.up(st as "issued"),
  ),
  approveFailed: [{ type: "approveFailed", sessionId: SID, reason: "vmc refused" }],
  vendSucceeded: [{ type: "vendSucceeded", item: 12 }],
  vendFailed: [{ type: "vendFailed" }],
  vendCancelled: [{ type: "vendCancelled" }],
  vmcReset: [{ type: "vmcReset", reason: "bus reset" }],
  timeout: (["payment", "vend", "session", "retry"] as const).map((timer) => ({
    type: "timeout" as const,
    sessionId: SID,
    timer,
  })),
  settled: [{ type: "settled", sessionId: SID }],
  settleFailed: [{ type: "settleFailed", sessionId: SID, reason: "unreachable" }],
};

/** The names a union in types.ts declares (`tag: "…"` / `type: "…"` between its head and the next export). */
function declared(union: string, key: "tag" | "type"): string[] {
  const src = readFileSync(new URL("./types.ts", import.meta.url), "utf8");
  const start = src.indexOf(`export type ${union} =`);
  if (start < 0) throw new Error(`${union} not found in types.ts`);
  const end = src.indexOf("\nexport ", start + 1);
  const body = src.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(new RegExp(`\\b${key}: "(\\w+)"`, "g"))].map((m) => m[1] ?? "").sort();
}

/** Ignored, or a vend request denied without becoming a session (machine.ts `stay` / `denyBusy`). */
function explicitlyUnhandled(t: Transition): boolean {
  if (t.effects.length > 0 && t.effects.every((e) => e.type === "ignored")) return true;
  const [only] = t.effects;
  return t.effects.length === 1 && only?.type === "denyVend" && only.sessionId === null;
}

const TAGS = Object.keys(STATES) as Tag[];
const TYPES = Object.keys(INPUTS) as InputType[];
const PAIRS = TAGS.flatMap((tag) => TYPES.map((type) => ({ tag, type })));

describe("transition tables: every (state, input) pair has a row or is explicitly ignored", () => {
  it("the representatives name every state tag and input type declared in types.ts", () => {
    expect([...TAGS].sort()).toEqual(declared("EngineState", "tag"));
    expect([...TYPES].sort()).toEqual(declared("EngineInput", "type"));
  });

  it("the tables were loaded, and each row names a known state and input", () => {
    expect(tables.length).toBeGreaterThan(100);
    for (const row of tables) {
      expect(TAGS).toContain(row.from.tag);
      expect(TYPES).toContain(row.input.type);
    }
  });

  it.each(PAIRS)("$tag × $type", ({ tag, type }) => {
    if (tables.some((r) => r.from.tag === tag && r.input.type === type)) return;
    for (const { state, ctx } of STATES[tag]) {
      for (const input of INPUTS[type]) {
        const t = transition(state, input, ctx);
        const what = `${tag}${"purpose" in state ? `(${state.purpose})` : ""} × ${JSON.stringify(input)}`;
        expect(explicitlyUnhandled(t), `no row, yet handled: ${what} → ${t.effects.map((e) => e.type)}`).toBe(
          true,
        );
        expect(t.state, `no row, yet the state changed: ${what}`).toEqual(state);
      }
    }
  });
});
