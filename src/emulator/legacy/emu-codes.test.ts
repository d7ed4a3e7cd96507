import { describe, expect, it } from "vitest";
import { createStandaloneLegacy } from "./harness.test-support.js";

const IDS = { MerchantId: "POSDK99999", LocationId: "88888" };
const UNIT = "123456789012345";

/** Seed "Errors": every operation can answer 10; these list 30 for an unknown key. */
const OPERATIONS: [name: string, validBodyForUnknownPoS: Record<string, unknown> | null][] = [
  ["PaymentStart", null],
  ["GetPaymentStatus", { OrderId: "o" }],
  ["PaymentCancel", {}],
  ["PaymentRefund", { OrderId: "o", Amount: "0.00", BulkRef: "" }],
  ["RegisterPoS", null],
  ["UpdateRegisteredPoSName", null],
  ["UnRegisterPoS", {}],
  ["AssignPoSUnitIdToPos", null],
  ["UnAssignPoSUnitIdToPoS", { PoSUnitId: UNIT }],
  ["ReadPoSAssignPoSUnitId", {}],
  ["ReadPoSUnitAssignedPoSId", { PoSUnitId: UNIT }],
  ["GetUniquePoSId", null],
  ["GetCurrentPayment", null],
  ["GetPosList", null],
  ["GetLocationList", null],
  ["ReservationStart", { OrderId: "o", Amount: "1.00", BulkRef: "", CaptureType: "Full" }],
  ["GetReservationStatus", { OrderId: "o" }],
  ["ReservationCancel", { OrderId: "o" }],
  ["GetCurrentReservation", null],
  ["ReservationCapture", { OrderId: "o", Amount: "0.00", BulkRef: "" }],
];

describe("StatusCodes of the seed's error table", () => {
  it.each(OPERATIONS)("%s: missing parameters → 10", async (name) => {
    const w = createStandaloneLegacy();
    expect(await w.client.call(name, {})).toEqual({
      status: 400,
      body: {
        StatusCode: 10,
        StatusText: expect.stringMatching(/^Missing or invalid parameters: \w+ is required$/),
      },
    });
  });

  it.each(OPERATIONS.filter(([, body]) => body !== null))("%s: unknown PoSId → 30", async (name, body) => {
    const w = createStandaloneLegacy();
    const res = await w.client.call(name, { ...IDS, PoSId: "unknown", ...body });
    expect(res).toEqual({ status: 400, body: { StatusCode: 30, StatusText: expect.any(String) } });
  });

  it("unknown MerchantId/LocationId → 30 for keyed operations, 10 for RegisterPoS and GetCurrentReservation", async () => {
    const w = createStandaloneLegacy();
    await w.client.call("RegisterPoS", { ...IDS, PoSId: "p1", Name: "n" });
    const wrong = { MerchantId: "POSDK99999", LocationId: "77777", PoSId: "p1" };
    expect((await w.client.call("GetPaymentStatus", { ...wrong, OrderId: "o" })).body).toMatchObject({
      StatusCode: 30,
    });
    expect((await w.client.call("GetCurrentReservation", wrong)).body).toMatchObject({ StatusCode: 10 });
    expect((await w.client.call("RegisterPoS", { ...wrong, Name: "n" })).body).toMatchObject({
      StatusCode: 10,
    });
  });
});
