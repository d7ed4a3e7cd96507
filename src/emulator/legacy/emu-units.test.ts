import { beforeEach, describe, expect, it } from "vitest";
import { defaultUsers } from "../users.js";
import { createStandaloneLegacy, type StandaloneLegacy } from "./harness.test-support.js";

const IDS = { MerchantId: "POSDK99999", LocationId: "88888" };
const UNIT_A = "111111111111111";
const UNIT_B = "222222222222222";

let w: StandaloneLegacy;
const call = (op: string, body: unknown) => w.client.call(op, body);
const u1 = defaultUsers()[0] ?? { phone: "+4520031801", features: [] };

beforeEach(() => {
  w = createStandaloneLegacy();
});

describe("RegisterPoS, names, GetUniquePoSId (seed; pos-legacy §5.1)", () => {
  it("registers a given PoSId, refuses a duplicate with 10, generates a GUID when empty or absent", async () => {
    expect(await call("RegisterPoS", { ...IDS, PoSId: "vend-unit-7", Name: "M7" })).toEqual({
      status: 200,
      body: { PoSId: "vend-unit-7" },
    });
    expect((await call("RegisterPoS", { ...IDS, PoSId: "vend-unit-7", Name: "M7" })).body).toMatchObject({
      StatusCode: 10,
    });
    const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect((await call("RegisterPoS", { ...IDS, PoSId: "", Name: "G" })).body).toEqual({
      PoSId: expect.stringMatching(guid),
    });
    expect((await call("RegisterPoS", { ...IDS, Name: "G" })).body).toEqual({
      PoSId: expect.stringMatching(guid),
    });
    expect((await call("RegisterPoS", { ...IDS, LocationId: "1", Name: "G" })).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await call("RegisterPoS", { ...IDS, PoSId: "p".repeat(257), Name: "G" })).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await call("GetUniquePoSId", { MerchantId: "POSDK99999" })).body).toEqual({
      PoSId: expect.stringMatching(guid),
    });
    expect((await call("GetUniquePoSId", { MerchantId: "OTHER" })).body).toMatchObject({ StatusCode: 20 });
    expect((await call("GetLocationList", { MerchantId: "POSDK99999" })).body).toEqual({
      Location: [{ LocationId: "88888", Name: "Vending hall", NotifyUrl: null, NumberOfPoS: 3 }],
    });
    expect((await call("GetLocationList", { MerchantId: "OTHER" })).body).toMatchObject({ StatusCode: 10 });
  });

  it("renames, lists and unregisters; unknown PoS → 10 for rename, 30 for unregister", async () => {
    await call("RegisterPoS", { ...IDS, PoSId: "p1", Name: "One" });
    expect(await call("UpdateRegisteredPoSName", { ...IDS, PoSId: "p1", Name: "Uno" })).toEqual({
      status: 200,
      body: {},
    });
    expect((await call("UpdateRegisteredPoSName", { ...IDS, PoSId: "p9", Name: "X" })).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await call("GetPosList", IDS)).body).toEqual({
      Poses: [{ PosId: "p1", Name: "Uno", PosUnitId: null, Payment: null }],
    });
    expect((await call("GetPosList", { ...IDS, LocationId: "2" })).body).toMatchObject({ StatusCode: 10 });
    expect(await call("UnRegisterPoS", { ...IDS, PoSId: "p1" })).toEqual({ status: 200, body: {} });
    expect((await call("UnRegisterPoS", { ...IDS, PoSId: "p1" })).body).toMatchObject({ StatusCode: 30 });
    expect((await call("GetPosList", IDS)).body).toEqual({ Poses: [] });
  });
});

describe("PoS units (seed AssignPoSUnitIdToPos rule; pos-legacy §9)", () => {
  beforeEach(async () => {
    await call("RegisterPoS", { ...IDS, PoSId: "p1", Name: "One" });
    await call("RegisterPoS", { ...IDS, PoSId: "p2", Name: "Two" });
  });

  it("assigns, reads both ways, unassigns; 15 digits required; 30 for unknown keys", async () => {
    expect((await call("ReadPoSAssignPoSUnitId", { ...IDS, PoSId: "p1" })).body).toEqual({ PoSUnitId: "" });
    expect(await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p1", PoSUnitId: UNIT_A })).toEqual({
      status: 200,
      body: {},
    });
    expect((await call("ReadPoSAssignPoSUnitId", { ...IDS, PoSId: "p1" })).body).toEqual({
      PoSUnitId: UNIT_A,
    });
    expect((await call("ReadPoSUnitAssignedPoSId", { ...IDS, PoSUnitId: UNIT_A })).body).toEqual({
      PoSId: "p1",
    });
    expect((await call("ReadPoSUnitAssignedPoSId", { ...IDS, PoSUnitId: UNIT_B })).body).toMatchObject({
      StatusCode: 30,
    });
    expect((await call("ReadPoSAssignPoSUnitId", { ...IDS, PoSId: "p9" })).body).toMatchObject({
      StatusCode: 30,
    });
    expect(
      (await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p1", PoSUnitId: "12345" })).body,
    ).toMatchObject({ StatusCode: 10 });
    expect(
      (await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p9", PoSUnitId: UNIT_B })).body,
    ).toMatchObject({ StatusCode: 10 });
    expect(
      (await call("UnAssignPoSUnitIdToPoS", { ...IDS, PoSId: "p2", PoSUnitId: UNIT_A })).body,
    ).toMatchObject({ StatusCode: 30 });
    expect(await call("UnAssignPoSUnitIdToPoS", { ...IDS, PoSId: "p1", PoSUnitId: UNIT_A })).toEqual({
      status: 200,
      body: {},
    });
    expect(w.legacy.ownsBeacon(UNIT_A)).toBe(false);
    expect((await call("GetPosList", IDS)).body).toMatchObject({
      Poses: [{ PosUnitId: null }, { PosUnitId: null }],
    });
  });

  it("moving a unit cancels the payments of both units (40); re-assigning the same unit changes nothing", async () => {
    await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p1", PoSUnitId: UNIT_A });
    await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p2", PoSUnitId: UNIT_B });
    const startOn = (PoSId: string, OrderId: string) =>
      call("PaymentStart", {
        ...IDS,
        PoSId,
        OrderId,
        Amount: "1.00",
        BulkRef: "",
        Action: "Start",
        CustomerTokenCalc: 1,
        HMAC: w.hmac({ posId: PoSId, orderId: OrderId, amount: "1.00", bulkRef: "" }),
      });
    await startOn("p1", "O1");
    await startOn("p2", "O2");
    await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p1", PoSUnitId: UNIT_A });
    const st = async (PoSId: string, OrderId: string) =>
      ((await call("GetPaymentStatus", { ...IDS, PoSId, OrderId })).body as Record<string, unknown>)
        .PaymentStatus;
    expect(await st("p1", "O1")).toBe(30);
    // p1 had unit A and now gets unit B (held by p2): payments of both units are cancelled.
    await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p1", PoSUnitId: UNIT_B });
    expect(await st("p1", "O1")).toBe(40);
    expect(await st("p2", "O2")).toBe(40);
    expect((await call("ReadPoSAssignPoSUnitId", { ...IDS, PoSId: "p2" })).body).toEqual({ PoSUnitId: "" });
    const list = (await call("GetPosList", IDS)).body;
    expect(list).toMatchObject({
      Poses: [
        {
          PosId: "p1",
          PosUnitId: UNIT_B,
          Payment: { Status: 40, OrderId: "O1", Amount: 1, LatestUpdate: "14-11-2023 22:13:20" },
        },
        { PosId: "p2", PosUnitId: null, Payment: { Status: 40 } },
      ],
    });
  });

  it("a check-in expires after 120 s when no payment pairs with it", async () => {
    await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: "p1", PoSUnitId: UNIT_A });
    w.legacy.checkin(UNIT_A, u1);
    w.clock.advance(120_000);
    const HMAC = w.hmac({ posId: "p1", orderId: "C1", amount: "1.00", bulkRef: "" });
    await call("PaymentStart", {
      ...IDS,
      PoSId: "p1",
      OrderId: "C1",
      Amount: "1.00",
      BulkRef: "",
      Action: "Start",
      CustomerTokenCalc: 1,
      HMAC,
    });
    const body = (await call("GetPaymentStatus", { ...IDS, PoSId: "p1", OrderId: "C1" })).body;
    expect(body).toMatchObject({ PaymentStatus: 30 });
  });
});
