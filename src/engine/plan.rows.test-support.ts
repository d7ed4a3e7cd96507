import { expect } from "vitest";
import { find, S, vendRequested } from "./selection.test-support.js";
import { CARD_UNAVAILABLE } from "./steps.js";
import type { Row } from "./table.test-support.js";
import type { EngineInput, EngineState, PlanMember } from "./types.js";

/** Fixtures and rows of member plan vends (issue 18; plan.test.ts, coverage.test.ts). */
export const MEMBER: PlanMember = {
  memberId: "m-1",
  planId: "coffee-20",
  badge: "x".repeat(43),
  day: "2026-11-25",
  month: "2026-11",
};
export const planVending: EngineState = { tag: "planVending", session: S, member: MEMBER };
type VendRequested = EngineInput & { type: "vendRequested" };
export const granted = (price = 150): VendRequested => ({
  ...(vendRequested(price) as VendRequested),
  plan: { kind: "grant", member: MEMBER },
});

const END = ["clearTimer", "recordVend", "finishSession", "show"] as const;

export const rows: Row[] = [
  {
    name: "idle, a member's grant → plan vend approved at the price, no payment, journaled with the member",
    from: { tag: "idle" },
    input: granted(),
    to: { tag: "planVending", member: MEMBER },
    effects: ["openSession", "approveVend", "show", "startTimer"],
    check: (e) => {
      expect(find(e, "openSession")?.member).toEqual(MEMBER);
      expect(find(e, "approveVend")).toMatchObject({ item: 12, amount: 150 });
    },
  },
  {
    name: "idle, a member's grant for a price out of bounds → refused as any request",
    from: { tag: "idle" },
    input: granted(60_000),
    to: { tag: "idle" },
    effects: ["openSession", "denyVend", "finishSession"],
    check: (e) => expect(find(e, "openSession")?.member).toBeUndefined(),
  },
  {
    name: "idle, the gate denies (over allowance, deny) → denied with its message, nothing journaled",
    from: { tag: "idle" },
    input: { ...granted(), plan: { kind: "deny", message: "Your plan's allowance is used up for today" } },
    to: { tag: "idle" },
    effects: ["denyVend", "show"],
    check: (e) =>
      expect(find(e, "show")?.screen).toMatchObject({
        message: "Your plan's allowance is used up for today",
      }),
  },
  {
    name: "members only (issue 31), a member's grant → the plan vend as usual",
    from: { tag: "idle" },
    input: granted(),
    context: { membersOnly: true },
    to: { tag: "planVending", member: MEMBER },
    effects: ["openSession", "approveVend", "show", "startTimer"],
  },
  {
    name: "members only, a selection without a member → denied at the machine, card payments unavailable, nothing journaled or sent",
    from: { tag: "idle" },
    input: vendRequested(),
    context: { membersOnly: true },
    to: { tag: "idle" },
    effects: ["denyVend", "show"],
    check: (e) => expect(find(e, "show")?.screen).toMatchObject({ kind: "idle", message: CARD_UNAVAILABLE }),
  },
  {
    name: "members only, the gate denies → its message, as in service",
    from: { tag: "idle" },
    input: { ...granted(), plan: { kind: "deny", message: "This badge has no plan at this machine" } },
    context: { membersOnly: true },
    to: { tag: "idle" },
    effects: ["denyVend", "show"],
    check: (e) =>
      expect(find(e, "show")?.screen).toMatchObject({ message: "This badge has no plan at this machine" }),
  },
  {
    name: "members only, a price out of bounds → refused and journaled as any request (no payment)",
    from: { tag: "idle" },
    input: vendRequested(60_000),
    context: { membersOnly: true },
    to: { tag: "idle" },
    effects: ["openSession", "denyVend", "finishSession"],
  },
  {
    name: "plan vend delivered → recorded, closed captured (no settlement)",
    from: planVending,
    input: { type: "vendSucceeded", item: 12 },
    to: { tag: "idle" },
    effects: [...END],
    check: (e) => {
      expect(find(e, "recordVend")?.outcome).toBe("success");
      expect(find(e, "finishSession")?.result).toBe("captured");
    },
  },
  {
    name: "plan vend failed → recorded, closed cancelled, the customer told",
    from: planVending,
    input: { type: "vendFailed" },
    to: { tag: "idle" },
    effects: ["clearTimer", "recordVend", "show", "finishSession", "show"],
    check: (e) => expect(find(e, "finishSession")?.result).toBe("cancelled"),
  },
  {
    name: "plan vend cancelled by the VMC → closed cancelled",
    from: planVending,
    input: { type: "vendCancelled" },
    to: { tag: "idle" },
    effects: [...END],
    check: (e) => expect(find(e, "recordVend")?.outcome).toBe("cancelled"),
  },
  {
    name: "approval refused by the VMC → closed cancelled",
    from: planVending,
    input: { type: "approveFailed", sessionId: S.id, reason: "state" },
    to: { tag: "idle" },
    effects: [...END],
  },
  {
    name: "no outcome in time → unknown, counted, closed captured",
    from: planVending,
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    to: { tag: "idle" },
    effects: [...END],
    check: (e) => {
      expect(find(e, "recordVend")?.outcome).toBe("unknown");
      expect(find(e, "finishSession")?.result).toBe("captured");
    },
  },
  {
    name: "another timer → ignored",
    from: planVending,
    input: { type: "timeout", sessionId: S.id, timer: "payment" },
    to: { tag: "planVending" },
    effects: ["ignored"],
  },
  {
    name: "VMC reset during the plan vend → unknown (MDB §7.4.7), counted",
    from: planVending,
    input: { type: "vmcReset", reason: "bus reset" },
    to: { tag: "idle" },
    effects: [...END],
    check: (e) => expect(find(e, "recordVend")?.outcome).toBe("unknown"),
  },
];
