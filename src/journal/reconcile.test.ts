import { describe, expect, it } from "vitest";
import type { LedgerEntry } from "../emulator/types.js";
import type { SessionRow } from "./journal.js";
import { reconcile } from "./reconcile.js";

const session = (over: Partial<SessionRow>): SessionRow => ({
  id: "s",
  orderId: "o1",
  flow: "selection",
  item: 1,
  price: 150,
  driver: "v10",
  paymentId: "p1",
  openedAt: 1,
  approvedAmount: 150,
  vendOutcome: "success",
  decision: { action: "capture", amount: 150, reason: "", review: false },
  result: "captured",
  reason: "",
  closedAt: 2,
  ...over,
});
let seq = 0;
const entry = (kind: LedgerEntry["kind"], amount = 150, id = "p1"): LedgerEntry => ({
  seq: ++seq,
  interface: "v10",
  id,
  paymentId: null,
  orderId: "o1",
  kind,
  amount,
  at: 1,
});

describe("reconcile journal against the service ledger", () => {
  it("accepts a captured vend captured once at its amount", () => {
    expect(reconcile([session({})], [entry("reserved"), entry("captured")])).toMatchObject({
      consistent: true,
      captured: 150,
    });
  });
  it.each([
    ["captured twice", [entry("reserved"), entry("captured"), entry("captured")]],
    ["captured and released", [entry("reserved"), entry("captured"), entry("cancelled")]],
    ["captured at another amount", [entry("reserved"), entry("captured", 100)]],
    ["never captured", [entry("reserved")]],
    ["unknown payment", [entry("reserved"), entry("captured"), entry("reserved", 10, "p9")]],
  ])("flags a captured session %s", (_name, ledger) => {
    expect(reconcile([session({})], ledger).consistent).toBe(false);
  });
  it("requires a cancelled session's reservation to be released", () => {
    const s = session({
      result: "cancelled",
      decision: { action: "cancel", amount: 150, reason: "", review: false },
    });
    expect(reconcile([s], [entry("reserved"), entry("cancelled")]).consistent).toBe(true);
    expect(reconcile([s], [entry("reserved")]).consistent).toBe(false);
    expect(reconcile([s], []).consistent).toBe(true);
  });
  it("flags sessions that are open or unsettled", () => {
    expect(
      reconcile([session({ closedAt: null, result: null })], [entry("reserved"), entry("captured")])
        .consistent,
    ).toBe(false);
    expect(
      reconcile([session({ result: "unsettled" })], [entry("reserved"), entry("captured")]).consistent,
    ).toBe(false);
  });
  it("accepts a direct payment refunded after a failed vend", () => {
    const s = session({ result: "cancelled", paymentId: "o1" });
    const paid = { ...entry("paid", 150, "o1"), interface: "legacy" as const };
    const refunded = { ...entry("refunded", 150, "o1"), interface: "legacy" as const };
    expect(reconcile([s], [paid, refunded]).consistent).toBe(true);
    expect(reconcile([s], [paid]).consistent).toBe(false);
  });
});
