import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MONTH_END, type Month, snapshot, startMonth } from "./clock-jump.test-support.js";
import { type HttpsReceiver, startHttpsReceiver } from "./testing/httpsReceiver.js";

/**
 * Issue 29 defect 2: advancing the clock runs every scheduled event at its own virtual time, in order. The
 * same month (clock-jump.test-support.ts) is set up twice on 2026-12-01 and then run to 2026-12-31 12:00:
 * once in a single jump, once lived through minute by minute (about 43,000 advances of 60 s on whole minutes)
 * on an emulator whose advances do NOT stop at scheduled times (`scheduledStops: false`: rules run only at
 * each advance's end, like a periodic tick). Every rule of the month falls on a whole minute, so the minute
 * run meets each at its own time without help from the schedule: it is the reference. The ledger, every
 * payment point's report lines and the transfers must be identical, and the rules must stamp their own times.
 */

const MINUTE = 60_000;
let rx: HttpsReceiver;
let jumped: Month;
let lived: Month;

beforeAll(async () => {
  rx = await startHttpsReceiver();
  jumped = await startMonth(rx);
  lived = await startMonth(rx, false);
}, 60_000);

afterAll(async () => {
  await jumped?.close();
  await lived?.close();
  await rx?.close();
});

describe("clock jumps run scheduled events at their own time (issue 29, defect 2)", () => {
  it("one jump over a month leaves the same ledger, reports and transfers as living through it by the minute", async () => {
    expect(jumped.v10.emu.clock.now()).toBe(lived.v10.emu.clock.now());
    jumped.v10.emu.clock.advance(MONTH_END - jumped.v10.emu.clock.now());
    const started = performance.now();
    const clock = lived.v10.emu.clock;
    clock.advance(Math.ceil(clock.now() / MINUTE) * MINUTE - clock.now());
    while (clock.now() < MONTH_END) clock.advance(Math.min(MINUTE, MONTH_END - clock.now()));
    const livedMs = performance.now() - started;
    expect(clock.now()).toBe(MONTH_END);

    const a = await snapshot(jumped);
    const b = await snapshot(lived);
    expect(a).toEqual(b);
    // Not vacuous: the month moved money on many days.
    expect((a.ledger as unknown[]).length).toBeGreaterThanOrEqual(10);
    expect((a.transfers as unknown[]).length).toBeGreaterThanOrEqual(5);
    expect(livedMs).toBeLessThan(20_000);
  });

  it("each rule stamps its own time: due dates at 03:15, the next day's transfer, expiries to the ms", () => {
    const at = (orderId: string, kind: string): string | undefined => {
      const e = jumped.v10.emu.ledger().find((x) => x.orderId === orderId && x.kind === kind);
      return e === undefined ? undefined : new Date(e.at).toISOString();
    };
    expect(at("dec-11", "paid")).toBe("2026-12-11T03:15:00.000Z");
    expect(at("dec-15-eur", "paid")).toBe("2026-12-15T03:15:00.000Z");
    expect(at("dec-20", "paid")).toBe("2026-12-20T03:15:00.000Z");
    expect(at("dec-05", "paid")).toBeUndefined(); // the failing card: retried, then Failed, never paid
    expect(at("INV-DEC", "paid")).toBe("2026-12-18T00:00:00.000Z");
    expect(at("web-expires", "expired")).toBe("2026-12-09T10:30:00.000Z");
    const reservedAt = (orderId: string, kind = "reserved"): number =>
      jumped.v10.emu.ledger().find((x) => x.orderId === orderId && x.kind === kind)?.at ?? Number.NaN;
    const week = 7 * 24 * 3600_000;
    expect(at("one-off-expires", "expired")).toBe(
      new Date(reservedAt("one-off-expires") + week).toISOString(),
    );
    expect(at("v10-expires", "expired")).toBe(new Date(reservedAt("v10-expires") + week).toISOString());
    expect(at("R-released", "expired")).toBe(new Date(reservedAt("R-released") + week).toISOString());
    const captured = reservedAt("v10-paid", "captured");
    const refunded = reservedAt("v10-paid", "refunded");
    // The refund was Reserved at the first whole minute after the capture; auto-captured 24 h after that.
    expect(refunded % MINUTE).toBe(0);
    expect(refunded - captured).toBeGreaterThan(24 * 3600_000);
    expect(refunded - captured).toBeLessThanOrEqual(24 * 3600_000 + MINUTE);

    const transfers = jumped.v10.emu.reporting.transfers();
    const covering = (date: string) => transfers.filter((t) => t.transferReferenceDate === date);
    expect(covering("2026-12-12").map((t) => [t.currencyCode, t.amount])).toEqual([["DKK", 4_950 - 50]]);
    expect(covering("2026-12-16").map((t) => [t.currencyCode, t.amount])).toEqual([["EUR", 2_000 - 20]]);
    expect(covering("2026-12-30")).toEqual([]);
  });
});
