import { afterEach, describe, expect, it } from "vitest";
import type { Screen } from "../../drivers/display/display.js";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";
import type { PaymentDriver, PaymentRef, StartRequest } from "../payment/driver.js";
import type { SimPaymentDriver } from "../payment/sim.js";

let unit: TestUnit | undefined;
afterEach(async () => {
  // Time keeps moving while it stops: a start may be waiting in its (virtual) backoff.
  const stopping = unit?.engine.stop();
  await unit?.run(60_000);
  await stopping;
  unit?.journal.close();
  unit = undefined;
});

/**
 * Wraps the sim service so a test knows, synchronously, whether a payment exists at the service right now:
 * from a confirmed start until it is captured or cancelled.
 */
function tracking(p: SimPaymentDriver): { driver: PaymentDriver; exists: () => boolean } {
  let exists = false;
  const driver: PaymentDriver = Object.assign(Object.create(p) as SimPaymentDriver, {
    start: async (req: StartRequest) => {
      try {
        const ref = await p.start(req);
        exists = true;
        return ref;
      } catch (err) {
        // A lost answer: the service may have created the payment all the same.
        exists = (await p.lookup(req.orderId)) !== null;
        throw err;
      }
    },
    capture: (ref: PaymentRef, amount: number) => {
      exists = false;
      return p.capture(ref, amount);
    },
    cancel: (ref: PaymentRef) => {
      exists = false;
      return p.cancel(ref);
    },
  });
  return { driver, exists: () => exists };
}

/** Every screen shown, with whether a payment existed at the service at that moment. */
function watchScreens(u: TestUnit, exists: () => boolean): { screen: Screen; exists: boolean }[] {
  const seen: { screen: Screen; exists: boolean }[] = [];
  u.display.onShow((screen) => seen.push({ screen, exists: exists() }));
  return seen;
}

const qr = (s: Screen): string | null => ("checkinUri" in s ? s.checkinUri : null);

describe("no QR code without a payment behind it (the service resets connections)", () => {
  it("selection first: 'connecting' (no QR) until the payment exists, then the QR", async () => {
    let track: ReturnType<typeof tracking> | undefined;
    unit = await startTestUnit({
      payment: (p) => {
        track = tracking(p);
        return track.driver;
      },
    });
    const exists = () => track?.exists() ?? false;
    const seen = watchScreens(unit, exists);
    // The start's answer is lost (a reset after the service applied it): the screen says "connecting"
    // until the engine has confirmed by a lookup that the payment exists.
    unit.payment.injectFault("start", "lostResponse");
    unit.vmc.requestVend(12, 1250);
    await unit.run();
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(1);
    expect(seen.filter((s) => qr(s.screen) !== null && !s.exists)).toEqual([]);
    const kinds = seen.map((s) => s.screen.kind);
    expect(kinds.slice(0, 3)).toEqual(["connecting", "pay", "approveInApp"]);
    expect(seen[0]?.screen).toEqual({ kind: "connecting", amount: 1250, currency: "DKK", item: 12 });
    expect(unit.journal.sessions()[0]?.result).toBe("captured");
  });

  it("check-in first with an idle payment: no QR until the idle payment exists", async () => {
    let track: ReturnType<typeof tracking> | undefined;
    unit = await startTestUnit({
      engine: { flow: "checkin", checkinMode: "idlePayment" },
      customer: { action: "ignore" },
      payment: (p) => {
        track = tracking(p);
        p.injectFault("start", "unavailable");
        p.injectFault("start", "unavailable");
        return track.driver;
      },
    });
    // Drawn during start-up, while the first start was failing: none of them may carry the QR code.
    expect(unit.display.screens.filter((s) => qr(s) !== null)).toEqual([]);
    const seen = watchScreens(unit, () => track?.exists() ?? false);
    await unit.run(20_000);
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(3);
    expect(seen.filter((s) => qr(s.screen) !== null && !s.exists)).toEqual([]);
    expect(seen.filter((s) => qr(s.screen) !== null)).toHaveLength(1);
  });
});
