import { describe, expect, it } from "vitest";
import { createLedger } from "./ledger.js";

const entry = {
  interface: "v10",
  id: "p",
  paymentId: null,
  orderId: "o",
  kind: "paid",
  amount: 100,
  currency: "DKK",
} as const;

describe("ledger: time order and binary search", () => {
  it("entries never go back in time, even when the real-time source steps back", () => {
    let now = 1000;
    const ledger = createLedger({ now: () => now });
    ledger.record(entry);
    now = 900;
    expect(ledger.record(entry).at).toBe(1000);
    now = 1200;
    expect(ledger.record(entry).at).toBe(1200);
  });

  it("indexAt finds the first entry at or after a time", () => {
    let now = 0;
    const ledger = createLedger({ now: () => now });
    for (const t of [10, 20, 20, 30, 50]) {
      now = t;
      ledger.record(entry);
    }
    expect([0, 10, 11, 20, 21, 30, 49, 50, 51].map((t) => ledger.indexAt(t))).toEqual([
      0, 0, 1, 1, 3, 3, 4, 4, 5,
    ]);
    expect(createLedger({ now: () => 0 }).indexAt(5)).toBe(0);
  });
});
