import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StartRequest } from "../../../src/payment/driver.js";
import { isPaymentError, PaymentError } from "../../../src/payment/errors.js";
import { type ContractWorld, KINDS, reserve, startContractWorld, USERS } from "./support.js";

/**
 * Contract: capture (driver.ts `capture`): full, partial, and partial capture not possible. V10: the user
 * decides (sandbox user 05 has `partialCapturePossible: false`, pos-v10 §17, code 1308); older interface:
 * the reservation's CaptureType decides (`full` refuses a lower amount the same way, legacy README).
 */
let w: ContractWorld;
beforeAll(async () => {
  w = await startContractWorld();
});
afterAll(() => w.close());

describe.each(KINDS)("%s driver: capture", (kind) => {
  it("capture full: the reserved amount, once, even when repeated", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await reserve(w, c, `${kind}-full`, 2000);
    await c.driver.capture(ref, 2000);
    await c.driver.capture(ref, 2000); // driver.ts: idempotent for the same arguments
    expect(w.ledger(ref.orderId)).toEqual([
      ["reserved", 2000],
      ["captured", 2000],
    ]);
  });

  it("capture partial: less than reserved, once; the rest is not captured", async () => {
    const c = await w.connect(w.unit(kind));
    // V10 payments allow partial capture unless the user forbids it; an older-interface reservation must be
    // started with CaptureType Partial.
    const over: Partial<StartRequest> = kind === "legacy" ? { captureType: "partial" } : {};
    const ref = await reserve(w, c, `${kind}-part`, 3000, over);
    expect((await c.driver.status(ref)).partialCapturePossible).toBe(true);
    await c.driver.capture(ref, 1700);
    await c.driver.capture(ref, 1700);
    expect(w.ledger(ref.orderId)).toEqual([
      ["reserved", 3000],
      ["captured", 1700],
    ]);
  });

  it("partial capture not possible: a lower amount is refused with partialCaptureNotPossible; full works", async () => {
    const c = await w.connect(w.unit(kind));
    const phone = kind === "v10" ? USERS.noPartialCapture : USERS.credit;
    const over: Partial<StartRequest> = kind === "legacy" ? { captureType: "full" } : {};
    const ref = await reserve(w, c, `${kind}-nopart`, 2000, over, phone);
    expect((await c.driver.status(ref)).partialCapturePossible).toBe(false);
    const err = await c.driver.capture(ref, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentError);
    expect(isPaymentError(err, "partialCaptureNotPossible")).toBe(true);
    expect((err as PaymentError).ambiguous).toBe(false);
    // V10 learns it from the service (409 1308); the older driver refuses locally before sending anything,
    // because a Full reservation's capture carries no amount ("0.00", legacy README "Capture").
    if (kind === "v10")
      expect((err as PaymentError).details).toMatchObject({ status: 409, serviceCode: "1308" });
    else expect((err as PaymentError).details.status).toBeUndefined();
    expect(w.ledger(ref.orderId)).toEqual([["reserved", 2000]]);
    await c.driver.capture(ref, 2000);
    expect(w.ledger(ref.orderId)).toEqual([
      ["reserved", 2000],
      ["captured", 2000],
    ]);
  });

  it("capture above the reserved amount is refused as invalid and captures nothing", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await reserve(w, c, `${kind}-over`, 1000);
    const err = await c.driver.capture(ref, 1001).catch((e: unknown) => e);
    expect(isPaymentError(err, "invalid")).toBe(true);
    expect(w.ledger(ref.orderId)).toEqual([["reserved", 1000]]);
    await c.driver.cancel(ref);
  });
});
