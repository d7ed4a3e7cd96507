import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

describe("V10 points of sale and check-in (pos-v10 §5, §10, §13)", () => {
  let kit: V10Kit;
  let storeId: string;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0 });
    storeId = kit.emu.info.v10.storeId;
    kit.emu.registerCallback("vm-alias", "http://127.0.0.1:9/unused");
  });
  afterAll(() => kit.close());

  const base = () => ({
    merchantPosId: randomUUID(),
    storeId,
    name: "Vending 1",
    supportedBeaconTypes: ["QR", "NFC"],
  });
  const create = (extra: Record<string, unknown>) =>
    kit.call("POST", "/v10/pointofsales", { body: { ...base(), ...extra } });

  it("validation codes 1111, 1112, 1100, 1116, 1118, 1099 and store codes 1002", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ merchantPosId: "x".repeat(37) }, "1111"],
      [{ merchantPosId: "" }, "1111"],
      [{ name: "tab\there" }, "1112"],
      [{ beaconId: "12345" }, "1100"],
      [{ callbackAlias: "unknown-alias" }, "1116"],
      [{ calibrationType: 70000 }, "1118"],
      [{ supportedBeaconTypes: ["QR", "QR"] }, "1099"],
      [{ supportedBeaconTypes: ["BluetoothLE"] }, "1099"],
      [{ storeId: randomUUID() }, "1002"],
    ];
    for (const [extra, code] of cases) {
      const r = await create(extra);
      expect([r.code, extra]).toEqual([code, extra]);
    }
    expect((await create({ calibrationType: 3 })).status).toBe(200);
  });

  it("1200 for a merchantPosId in use, 1202 for a beaconId in use; both free again after delete", async () => {
    const beaconId = "123456789012345";
    const first = await create({ merchantPosId: "till-7", beaconId });
    expect(first.status).toBe(200);
    expect((await create({ merchantPosId: "till-7" })).code).toBe("1200");
    expect((await create({ beaconId })).code).toBe("1202");
    const posId = (first.body as { posId: string }).posId;
    expect((await kit.call("DELETE", `/v10/pointofsales/${posId}`)).status).toBe(200);
    expect((await kit.call("GET", `/v10/pointofsales/${posId}`)).status).toBe(404);
    expect((await kit.call("DELETE", `/v10/pointofsales/${posId}`)).status).toBe(404);
    expect((await create({ merchantPosId: "till-7", beaconId })).status).toBe(200);
  });

  it("a supplied GUID beaconId is kept as given; lookup by beacon is case-insensitive", async () => {
    const beaconId = "CD851CD7-8398-4A03-83C1-391A2F5CB71C";
    const r = await create({ beaconId, callbackAlias: "vm-alias", requirePaymentBeforeCheckin: true });
    const posId = (r.body as { posId: string }).posId;
    expect((await kit.call("GET", `/v10/pointofsales/${posId}`)).body).toMatchObject({
      beaconId,
      callbackAlias: "vm-alias",
      requirePaymentBeforeCheckin: true,
      supportedBeaconTypes: ["QR", "NFC"],
    });
    const list = await kit.call("GET", `/v10/pointofsales?beaconId=${beaconId.toLowerCase()}`);
    expect(list.body).toEqual({ posIds: [posId] });
  });

  it("filters: none → 1121; storeId lists, ANDed filters that match nothing → []", async () => {
    expect((await kit.call("GET", "/v10/pointofsales")).code).toBe("1121");
    const { posId } = await kit.createPos();
    const byStore = (await kit.call("GET", `/v10/pointofsales?storeId=${storeId}`)).body as {
      posIds: string[];
    };
    expect(byStore.posIds).toContain(posId);
    const none = await kit.call("GET", `/v10/pointofsales?storeId=${randomUUID()}&merchantPosId=nothing`);
    expect(none.body).toEqual({ posIds: [] });
  });

  it("check-in lifecycle: false → true on check-in (with user data) → false when paired with a payment", async () => {
    const { posId, beaconId } = await kit.createPos();
    const path = `/v10/pointofsales/${posId}/checkin`;
    expect((await kit.call("GET", path)).body).toEqual({ isUserCheckedIn: false, pollDelayInMs: 10 });
    kit.emu.userSimulation.checkin(beaconId, "+4520031804");
    expect((await kit.call("GET", path)).body).toMatchObject({
      isUserCheckedIn: true,
      loyaltyIds: ["LOY4520031804"],
      customerReceiptToken: "",
    });
    const p = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    expect((await kit.payment(p)).status).toBe("IssuedToUser");
    expect(((await kit.call("GET", path)).body as { isUserCheckedIn: boolean }).isUserCheckedIn).toBe(false);
  });

  it("an unpaired check-in lapses after 120 s", async () => {
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031801");
    kit.emu.clock.advance(120_000);
    const r = await kit.call("GET", `/v10/pointofsales/${posId}/checkin`);
    expect(r.body).toMatchObject({ isUserCheckedIn: false });
    expect(((await kit.initiate(posId)).body as { paymentId: string }).paymentId).toBeDefined();
  });

  it("requirePaymentBeforeCheckin: check-in without a payment is refused, with one it pairs", async () => {
    const { posId, beaconId } = await kit.createPos({ requirePaymentBeforeCheckin: true });
    expect(kit.emu.userSimulation.checkin(beaconId, "+4520031801").status).toBe(409);
    const p = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    expect(kit.emu.userSimulation.checkin(beaconId, "+4520031801").status).toBe(200);
    expect((await kit.payment(p)).status).toBe("IssuedToUser");
  });

  it("deleting a PoS cancels its unreserved payment but keeps Reserved ones capturable", async () => {
    const { posId, beaconId } = await kit.createPos();
    const reserved = await kit.reserved(posId, beaconId, 4);
    const active = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    expect((await kit.call("DELETE", `/v10/pointofsales/${posId}`)).status).toBe(200);
    expect((await kit.payment(active)).status).toBe("CancelledByService");
    expect(
      (await kit.call("POST", `/v10/payments/${reserved}/capture`, { body: { amount: 4 } })).status,
    ).toBe(200);
    expect(kit.emu.userSimulation.checkin(beaconId, "+4520031801").status).toBe(404);
  });
});
