import { expect, it } from "vitest";
import {
  ctx,
  find,
  inSession,
  S,
  settleOf,
  settlingOf,
  up,
  vend,
  vendingIn,
} from "./checkin.test-support.js";
import { transition } from "./machine.js";
import { type Row, transitionTable } from "./table.test-support.js";

const rows: Row[] = [
  // ---- session ----
  {
    name: "session + vend within funds → approve exactly the price",
    from: inSession(),
    input: vend(500),
    to: { tag: "sessionVending", current: { item: 7, price: 500 } },
    effects: ["clearTimer", "approveVend", "show", "startTimer"],
    check: (e) => expect(find(e, "approveVend")).toMatchObject({ item: 7, amount: 500 }),
  },
  {
    name: "session + vend above the funds left → denied, session goes on",
    from: inSession({ vended: 1800 }),
    input: vend(500),
    to: { tag: "session", vended: 1800 },
    effects: ["denyVend"],
  },
  {
    name: "session + vend at price 0 → denied",
    from: inSession(),
    input: vend(0),
    to: { tag: "session" },
    effects: ["denyVend"],
  },
  {
    name: "no partial capture + vend of less than the reservation → deny and cancel before anything is vended",
    from: inSession({ partial: false }),
    input: vend(500),
    to: { tag: "settling", action: "cancel" },
    effects: ["denyVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "no partial capture + vend of exactly the reservation → approved",
    from: inSession({ partial: false }),
    input: vend(2000),
    to: { tag: "sessionVending" },
    effects: ["clearTimer", "approveVend", "show", "startTimer"],
  },
  {
    name: "session ended with nothing vended → cancel",
    from: inSession(),
    input: { type: "sessionEnded" },
    to: { tag: "settling", action: "cancel", result: "cancelled" },
    effects: ["clearTimer", "settle", "show"],
  },
  {
    name: "session ended after vends → capture what was vended (partial capture releases the rest)",
    from: inSession({ vended: 700 }),
    input: { type: "sessionEnded" },
    to: { tag: "settling", action: "capture", amount: 700, result: "captured" },
    effects: ["clearTimer", "settle", "show"],
    check: (e) => expect(settleOf(e)).toMatchObject({ action: "capture", amount: 700, review: false }),
  },
  {
    name: "customer idle in the session → end it at the VMC and settle",
    from: inSession({ vended: 300 }),
    input: { type: "timeout", sessionId: S.id, timer: "session" },
    to: { tag: "settling", action: "capture", amount: 300 },
    effects: ["endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "VMC reset in the session → settle what was vended",
    from: inSession({ vended: 300 }),
    input: { type: "vmcReset", reason: "x" },
    to: { tag: "settling", action: "capture", amount: 300 },
    effects: ["clearTimer", "settle", "show"],
  },
  {
    name: "session + payment update → ignored",
    from: inSession(),
    input: up("reserved"),
    to: { tag: "session" },
    effects: ["ignored"],
  },

  // ---- a vend inside the session ----
  {
    name: "vend delivered → back to the session with the funds left",
    from: vendingIn(),
    input: { type: "vendSucceeded", item: 7 },
    to: { tag: "session", vended: 1200 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
    check: (e) => expect(find(e, "show")?.screen).toMatchObject({ kind: "session", available: 800 }),
  },
  {
    name: "vend delivered that uses the funds → end the session and capture",
    from: vendingIn({ vended: 1300 }),
    input: { type: "vendSucceeded", item: 7 },
    to: { tag: "settling", action: "capture", amount: 2000 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "no partial capture: the full-amount vend delivered → capture it",
    from: vendingIn({ partial: false, vended: 0, current: { item: 1, price: 2000 } }),
    input: { type: "vendSucceeded", item: 1 },
    to: { tag: "settling", action: "capture", amount: 2000 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "vend failed → back to the session, nothing added",
    from: vendingIn(),
    input: { type: "vendFailed" },
    to: { tag: "session", vended: 500 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
    check: (e) => expect(find(e, "recordVend")?.outcome).toBe("failure"),
  },
  {
    name: "no partial capture: vend failed → end and cancel",
    from: vendingIn({ partial: false, vended: 0, current: { item: 1, price: 2000 } }),
    input: { type: "vendFailed" },
    to: { tag: "settling", action: "cancel" },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "vend cancelled by the VMC → back to the session",
    from: vendingIn(),
    input: { type: "vendCancelled" },
    to: { tag: "session", vended: 500 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
  },
  {
    name: "approval refused by the VMC → back to the session",
    from: vendingIn(),
    input: { type: "approveFailed", sessionId: S.id, reason: "state" },
    to: { tag: "session", vended: 500 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
  },
  {
    name: "no vend outcome in time, policy capture → counted, captured, flagged",
    from: vendingIn(),
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    to: { tag: "settling", action: "capture", amount: 1200 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
    check: (e) => expect(settleOf(e)?.review).toBe(true),
  },
  {
    name: "no vend outcome in time, policy cancel → only earlier vends captured, flagged",
    from: vendingIn(),
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    context: { unknownOutcome: "cancel" },
    to: { tag: "settling", action: "capture", amount: 500 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "VMC reset during a session vend → counts as delivered (MDB §7.4.7)",
    from: vendingIn(),
    input: { type: "vmcReset", reason: "power" },
    to: { tag: "settling", action: "capture", amount: 1200 },
    effects: ["clearTimer", "recordVend", "clearTimer", "settle", "show"],
  },
  {
    name: "VMC ended the session during the vend → unknown outcome, policy",
    from: vendingIn(),
    input: { type: "sessionEnded" },
    to: { tag: "settling", action: "capture", amount: 1200 },
    effects: ["clearTimer", "recordVend", "clearTimer", "settle", "show"],
  },
  {
    name: "vend request during a vend → denied",
    from: vendingIn(),
    input: vend(100),
    to: { tag: "sessionVending" },
    effects: ["denyVend"],
  },
  {
    name: "session timer during a vend → ignored",
    from: vendingIn(),
    input: { type: "timeout", sessionId: S.id, timer: "session" },
    to: { tag: "sessionVending" },
    effects: ["ignored"],
  },

  // ---- settling back to ready ----
  {
    name: "settled → ready, QR shown, polling again",
    from: settlingOf("capture"),
    input: { type: "settled", sessionId: S.id },
    to: { tag: "ready", allocating: false },
    effects: ["finishSession", "show", "watchCheckin"],
  },
  {
    name: "settled (idle payment mode) → next idle payment",
    from: settlingOf("cancel"),
    input: { type: "settled", sessionId: S.id },
    context: { checkinMode: "idlePayment" },
    to: { tag: "ready", allocating: true },
    effects: ["finishSession", "show", "allocateSession"],
  },
];

transitionTable("engine transitions (check-in first): vends in a session and settling", ctx, rows);

it("never approves more than the funds left, whatever the prices", () => {
  for (const vended of [0, 500, 1999]) {
    for (const price of [1, 500, 1500, 2000, 2001]) {
      const { effects } = transition(inSession({ vended }), vend(price), ctx);
      const approve = find(effects, "approveVend");
      if (approve) expect(approve.amount).toBeLessThanOrEqual(2000 - vended);
    }
  }
});
