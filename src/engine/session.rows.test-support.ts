import { expect } from "vitest";
import { ctx, find, paying, R, S, up, vend } from "./checkin.test-support.js";
import type { Row } from "./table.test-support.js";

/** The rows of the session.test.ts transition table, as data (coverage.test.ts checks the tables are complete). */
export const rows: Row[] = [
  // ---- ready ----
  {
    name: "ready + check-in → stop polling, allocate the session",
    from: { tag: "ready", allocating: false },
    input: { type: "checkedIn" },
    to: { tag: "ready", allocating: true },
    effects: ["stopCheckin", "allocateSession"],
  },
  {
    name: "ready (allocating) + check-in → ignored",
    from: { tag: "ready", allocating: true },
    input: { type: "checkedIn" },
    to: { tag: "ready", allocating: true },
    effects: ["ignored"],
  },
  {
    name: "ready + session allocated → reserve the session maximum",
    from: { tag: "ready", allocating: true },
    input: { type: "sessionAllocated", sessionId: S.id, orderId: S.orderId },
    to: { tag: "paying", purpose: "session", ref: null },
    effects: ["openSession", "startPayment"],
    check: (e) => {
      expect(find(e, "openSession")?.session.price).toBe(2000);
      expect(find(e, "startPayment")?.purpose).toBe("session");
    },
  },
  {
    name: "ready (not allocating) + session allocated → ignored",
    from: { tag: "ready", allocating: false },
    input: { type: "sessionAllocated", sessionId: S.id, orderId: S.orderId },
    to: { tag: "ready" },
    effects: ["ignored"],
  },
  {
    name: "ready + retry timer → allocate the next idle payment",
    from: { tag: "ready", allocating: false },
    input: { type: "timeout", sessionId: "", timer: "retry" },
    to: { tag: "ready", allocating: true },
    effects: ["allocateSession"],
  },
  {
    name: "ready + vend request without a check-in → denied",
    from: { tag: "ready", allocating: false },
    input: vend(100),
    to: { tag: "ready" },
    effects: ["denyVend"],
  },
  {
    name: "ready + vend success → ignored",
    from: { tag: "ready", allocating: false },
    input: { type: "vendSucceeded", item: 1 },
    to: { tag: "ready" },
    effects: ["ignored"],
  },

  // ---- paying for a session ----
  {
    name: "session payment issued → approve-in-app screen, customer timer starts",
    from: paying(),
    input: up("issued"),
    to: { tag: "paying", issued: true },
    effects: ["show", "startTimer"],
    check: (e) => expect(find(e, "startTimer")?.timer).toBe("payment"),
  },
  {
    name: "session payment reserved → offer the funds to the VMC",
    from: paying({ issued: true }),
    input: up("reserved"),
    to: { tag: "session", funds: 2000, partial: true, vended: 0 },
    effects: ["stopWatching", "clearTimer", "beginSession", "show", "startTimer"],
    check: (e) => {
      expect(find(e, "beginSession")?.funds).toBe(2000);
      expect(find(e, "startTimer")?.timer).toBe("session");
    },
  },
  {
    name: "reserved with partial capture not possible → session limited to the full amount",
    from: paying({ issued: true }),
    input: up("reserved", { partialCapturePossible: false }),
    to: { tag: "session", partial: false },
    effects: ["stopWatching", "clearTimer", "beginSession", "show", "startTimer"],
  },
  {
    name: "older interface (no partialCapturePossible) → partial capture allowed",
    from: paying({ issued: true }),
    input: up("reserved", { partialCapturePossible: null }),
    to: { tag: "session", partial: true },
    effects: ["stopWatching", "clearTimer", "beginSession", "show", "startTimer"],
  },
  {
    name: "session payment rejected → back to ready, polling again, nothing denied at the VMC",
    from: paying({ issued: true }),
    input: up("cancelled", { cancelReason: "user" }),
    to: { tag: "ready", allocating: false },
    effects: ["stopWatching", "clearTimer", "finishSession", "show", "watchCheckin"],
  },
  {
    name: "idle payment cancelled by the service → next idle payment at once",
    from: paying(),
    input: up("cancelled", { cancelReason: "service" }),
    context: { checkinMode: "idlePayment" },
    to: { tag: "ready", allocating: true },
    effects: ["stopWatching", "clearTimer", "finishSession", "show", "allocateSession"],
  },
  {
    name: "idle payment refused → retry after a delay",
    from: paying({ ref: null }),
    input: { type: "paymentStartFailed", sessionId: S.id, reason: "busy", unresolved: false },
    context: { checkinMode: "idlePayment" },
    to: { tag: "ready", allocating: false },
    effects: ["stopWatching", "clearTimer", "finishSession", "show", "startTimer"],
    check: (e) => expect(find(e, "startTimer")?.timer).toBe("retry"),
  },
  {
    name: "session payment started (poll mode) → watch it; the customer already checked in",
    from: paying(),
    input: { type: "paymentStarted", sessionId: S.id, ref: R },
    to: { tag: "paying", ref: R },
    effects: ["watchPayment"],
  },
  {
    name: "idle payment started → watch it, and now show the check-in QR code (the payment exists)",
    from: paying(),
    input: { type: "paymentStarted", sessionId: S.id, ref: R },
    context: { checkinMode: "idlePayment" },
    to: { tag: "paying", ref: R },
    effects: ["watchPayment", "show"],
    check: (e) => expect(find(e, "show")?.screen).toMatchObject({ kind: "idle", checkinUri: ctx.checkinUri }),
  },
  {
    name: "session payment + VMC cancel → ignored (no vend request in a reservation)",
    from: paying(),
    input: { type: "vendCancelled" },
    to: { tag: "paying" },
    effects: ["ignored"],
  },
  {
    name: "session payment timeout → cancel, no deny",
    from: paying({ issued: true }),
    input: { type: "timeout", sessionId: S.id, timer: "payment" },
    to: { tag: "settling", action: "cancel" },
    effects: ["stopWatching", "clearTimer", "settle"],
  },
];
