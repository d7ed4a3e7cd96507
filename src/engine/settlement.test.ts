import { describe, expect, it } from "vitest";
import { decideSettlement, type SettlementInput, settleActionOf } from "./settlement.js";

const base: SettlementInput = { price: 200, vends: [], mode: "reservation", policy: "capture" };
const v = (amount: number, outcome: "success" | "failure" | "unknown" | "cancelled" | null) => ({
  amount,
  outcome,
});

/** Every case of the money policy: the engine's transitions and each recovery case (recovery.test.ts). */
const TABLE: [string, Partial<SettlementInput>, ReturnType<typeof decideSettlement>][] = [
  // Selection first: one vend at the session's price.
  [
    "no vend (never approved)",
    {},
    { action: "cancel", amount: 200, reason: "vend never approved", review: false },
  ],
  [
    "delivered",
    { vends: [v(200, "success")] },
    { action: "capture", amount: 200, reason: "vends delivered", review: false },
  ],
  [
    "failed",
    { vends: [v(200, "failure")] },
    { action: "cancel", amount: 200, reason: "nothing delivered", review: false },
  ],
  [
    "cancelled at the VMC",
    { vends: [v(200, "cancelled")] },
    { action: "cancel", amount: 200, reason: "nothing delivered", review: false },
  ],
  [
    "unknown outcome, policy capture (MDB §7.4.7)",
    { vends: [v(200, "unknown")] },
    { action: "capture", amount: 200, reason: "vends with unknown outcome; policy: capture", review: true },
  ],
  [
    "unknown outcome, policy cancel",
    { vends: [v(200, "unknown")], policy: "cancel" },
    { action: "cancel", amount: 200, reason: "vends with unknown outcome; policy: cancel", review: true },
  ],
  [
    "approved, outcome never journaled (crash), policy capture",
    { vends: [v(200, null)], paymentState: "reserved" },
    { action: "capture", amount: 200, reason: "vends with unknown outcome; policy: capture", review: true },
  ],
  [
    "approved, outcome never journaled (crash), policy cancel",
    { vends: [v(200, null)], paymentState: "reserved", policy: "cancel" },
    { action: "cancel", amount: 200, reason: "vends with unknown outcome; policy: cancel", review: true },
  ],
  [
    "the caller's reason, with the policy appended for an unknown outcome",
    { vends: [v(200, "unknown")], why: "no vend outcome in time" },
    { action: "capture", amount: 200, reason: "no vend outcome in time; policy: capture", review: true },
  ],
  // Check-in sessions: the delivered vends are summed; the rest of the funds is released by the capture.
  [
    "check-in: delivered + failed + unknown (policy capture) sum",
    { vends: [v(50, "success"), v(30, "failure"), v(70, null)], paymentState: "reserved" },
    { action: "capture", amount: 120, reason: "vends with unknown outcome; policy: capture", review: true },
  ],
  [
    "check-in: delivered + unknown, policy cancel charges the delivered only",
    { vends: [v(50, "success"), v(70, "unknown")], policy: "cancel" },
    { action: "capture", amount: 50, reason: "vends with unknown outcome; policy: cancel", review: true },
  ],
  [
    "check-in: all vends failed",
    { vends: [v(50, "failure"), v(30, "cancelled")], paymentState: "reserved" },
    { action: "cancel", amount: 200, reason: "nothing delivered", review: false },
  ],
  [
    "partial capture impossible: the other-amount vend is never approved, nothing vended",
    { why: "partial capture not possible for this payment" },
    { action: "cancel", amount: 200, reason: "partial capture not possible for this payment", review: false },
  ],
  // Direct payments (older interface, mode payment): releasing money means refunding it.
  [
    "direct payment, nothing delivered → refund",
    { mode: "payment", vends: [v(200, "failure")], paymentState: "paid" },
    { action: "refund", amount: 200, reason: "nothing delivered", review: false },
  ],
  [
    "direct payment, delivered → capture (kept)",
    { mode: "payment", vends: [v(200, "success")], paymentState: "paid" },
    { action: "capture", amount: 200, reason: "vends delivered", review: false },
  ],
  // What the service says wins over the journal where money already moved or can no longer move.
  [
    "already captured at the service",
    { vends: [v(200, "failure")], paymentState: "captured" },
    { action: "capture", amount: 200, reason: "already captured", review: true },
  ],
  [
    "released at the service (cancelled)",
    { vends: [v(200, "success")], paymentState: "cancelled" },
    { action: "none", amount: 0, reason: "payment cancelled, nothing to settle", review: false },
  ],
  [
    "expired at the service",
    { paymentState: "expired" },
    { action: "none", amount: 0, reason: "payment expired, nothing to settle", review: false },
  ],
  [
    "failed at the service",
    { paymentState: "failed" },
    { action: "none", amount: 0, reason: "payment failed, nothing to settle", review: false },
  ],
  [
    "still pending at the service (customer never accepted), nothing vended",
    { paymentState: "pending" },
    { action: "cancel", amount: 200, reason: "vend never approved", review: false },
  ],
  [
    "issued at the service, nothing vended",
    { paymentState: "issued" },
    { action: "cancel", amount: 200, reason: "vend never approved", review: false },
  ],
];

describe("decideSettlement: the one money policy", () => {
  it.each(TABLE)("%s", (_name, over, expected) => {
    expect(decideSettlement({ ...base, ...over })).toEqual(expected);
  });

  it("maps a refund to the journal's cancel and refuses to apply `none`", () => {
    expect(settleActionOf(decideSettlement({ ...base, mode: "payment" }))).toBe("cancel");
    expect(settleActionOf(decideSettlement({ ...base, vends: [v(200, "success")] }))).toBe("capture");
    expect(() => settleActionOf(decideSettlement({ ...base, paymentState: "expired" }))).toThrow(
      /no settlement to apply: payment expired/,
    );
  });
});
