import { expect } from "vitest";
import { find, otherVend, S, settling, up, vending, vendRequested } from "./selection.test-support.js";
import type { Row } from "./table.test-support.js";

/** The rows of the vending.test.ts transition table, as data (coverage.test.ts checks the tables are complete). */
export const rows: Row[] = [
  // ---- vending ----
  {
    name: "vend success → capture the price",
    from: vending,
    input: { type: "vendSucceeded", item: 12 },
    to: { tag: "settling", action: "capture", result: "captured" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
    check: (e) => {
      expect(find(e, "settle")).toMatchObject({ action: "capture", amount: 150, review: false });
      expect(find(e, "recordVend")?.outcome).toBe("success");
    },
  },
  {
    name: "vend failure → cancel",
    from: vending,
    input: { type: "vendFailed" },
    to: { tag: "settling", action: "cancel", result: "cancelled" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
    check: (e) => expect(find(e, "recordVend")?.outcome).toBe("failure"),
  },
  {
    name: "VMC cancelled after approval was sent → cancel",
    from: vending,
    input: { type: "vendCancelled" },
    to: { tag: "settling", action: "cancel" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
  },
  {
    name: "approval refused by the VMC → cancel",
    from: vending,
    input: { type: "approveFailed", sessionId: S.id, reason: "state" },
    to: { tag: "settling", action: "cancel" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
  },
  {
    name: "no outcome in time, policy capture → capture, flagged for review",
    from: vending,
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    to: { tag: "settling", action: "capture" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
    check: (e) => {
      expect(find(e, "settle")).toMatchObject({ action: "capture", review: true });
      expect(find(e, "recordVend")?.outcome).toBe("unknown");
    },
  },
  {
    name: "no outcome in time, policy cancel → cancel, flagged for review",
    from: vending,
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    context: { unknownOutcome: "cancel" },
    to: { tag: "settling", action: "cancel" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
    check: (e) => expect(find(e, "settle")).toMatchObject({ action: "cancel", review: true }),
  },
  {
    name: "VMC reset during the vend → counts as success (MDB §7.4.7), review",
    from: vending,
    input: { type: "vmcReset", reason: "power" },
    to: { tag: "settling", action: "capture" },
    effects: ["clearTimer", "recordVend", "settle", "show"],
    check: (e) => expect(find(e, "settle")?.review).toBe(true),
  },
  {
    name: "vending + payment timer → ignored",
    from: vending,
    input: { type: "timeout", sessionId: S.id, timer: "payment" },
    to: { tag: "vending" },
    effects: ["ignored"],
  },
  {
    name: "vending + vend request → denied",
    from: vending,
    input: vendRequested(),
    to: { tag: "vending" },
    effects: ["denyVend"],
  },
  {
    name: "vending + payment update → ignored",
    from: vending,
    input: up("reserved"),
    to: { tag: "vending" },
    effects: ["ignored"],
  },
  {
    name: "vending + input of another session → ignored",
    from: vending,
    input: { type: "approveFailed", sessionId: "other", reason: "x" },
    to: { tag: "vending" },
    effects: ["ignored"],
  },

  {
    name: "vending + a new customer's vend request (new ids) → denied",
    from: vending,
    input: otherVend,
    to: { tag: "vending" },
    effects: ["denyVend"],
  },
  {
    name: "settling + a new customer's vend request (new ids) → denied",
    from: settling("capture"),
    input: otherVend,
    to: { tag: "settling" },
    effects: ["denyVend"],
  },
  // ---- settling ----
  {
    name: "settled → session finished with its result, idle",
    from: settling("capture"),
    input: { type: "settled", sessionId: S.id },
    to: { tag: "idle" },
    effects: ["finishSession", "show"],
    check: (e) => expect(find(e, "finishSession")?.result).toBe("captured"),
  },
  {
    name: "settlement failed → unsettled (decision journaled for recovery), idle",
    from: settling("cancel"),
    input: { type: "settleFailed", sessionId: S.id, reason: "unavailable" },
    to: { tag: "idle" },
    effects: ["finishSession", "show"],
    check: (e) => expect(find(e, "finishSession")?.result).toBe("unsettled"),
  },
  {
    name: "settling + vend request → denied",
    from: settling("capture"),
    input: vendRequested(),
    to: { tag: "settling" },
    effects: ["denyVend"],
  },
  {
    name: "settling + vend success → ignored",
    from: settling("capture"),
    input: { type: "vendSucceeded", item: 1 },
    to: { tag: "settling" },
    effects: ["ignored"],
  },
  {
    name: "settling + settled of another session → ignored",
    from: settling("capture"),
    input: { type: "settled", sessionId: "other" },
    to: { tag: "settling" },
    effects: ["ignored"],
  },
];
