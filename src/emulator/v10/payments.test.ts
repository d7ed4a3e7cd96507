import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

const id = (r: { body: unknown }): string => (r.body as { paymentId: string }).paymentId;

describe("V10 payment state machine and codes (pos-v10 §7)", () => {
  let kit: V10Kit;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0 });
  });
  afterAll(() => kit.close());

  it("1301 for a second active payment; Reserved does not block (P4 cleanup)", async () => {
    const { posId, beaconId } = await kit.createPos();
    const first = id(await kit.initiate(posId));
    const second = await kit.initiate(posId);
    expect([second.status, second.code]).toEqual([409, "1301"]);
    const list = await kit.call("GET", `/v10/payments?posId=${posId}`);
    expect(list.body).toEqual({ paymentIds: [first] });
    await kit.call("POST", `/v10/payments/${first}/cancel`);
    const reservedId = await kit.reserved(posId, beaconId);
    expect((await kit.initiate(posId)).status).toBe(200);
    expect((await kit.payment(reservedId)).status).toBe("Reserved");
  });

  it("capture rules: 1304 not reserved, 1305 above, 1307 other amount after capture, repeat 200, 1300 cancel after", async () => {
    const { posId, beaconId } = await kit.createPos();
    const pending = id(await kit.initiate(posId));
    expect((await kit.call("POST", `/v10/payments/${pending}/capture`, { body: { amount: 1 } })).code).toBe(
      "1304",
    );
    await kit.call("POST", `/v10/payments/${pending}/cancel`);
    const p = await kit.reserved(posId, beaconId, 20);
    expect((await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount: 20.01 } })).code).toBe(
      "1305",
    );
    expect((await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount: 20 } })).status).toBe(200);
    expect((await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount: 20 } })).status).toBe(200);
    expect((await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount: 19 } })).code).toBe(
      "1307",
    );
    expect((await kit.call("POST", `/v10/payments/${p}/cancel`)).code).toBe("1300");
    expect(kit.emu.ledger().filter((e) => e.id === p && e.kind === "captured")).toHaveLength(1);
  });

  it("P5: partialCapturePossible false for the no-partial-capture user → 1308; full capture works", async () => {
    const { posId, beaconId } = await kit.createPos();
    const p = await kit.reserved(posId, beaconId, 20, "+4520031805");
    expect((await kit.payment(p)).partialCapturePossible).toBe(false);
    expect((await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount: 10 } })).code).toBe(
      "1308",
    );
    expect((await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount: 20 } })).status).toBe(200);
  });

  it("a Reserved payment expires after 7 days → ExpiredAndCancelled (ledger expired); cancel → 1300", async () => {
    const { posId, beaconId } = await kit.createPos();
    const p = await kit.reserved(posId, beaconId, 5);
    kit.emu.clock.advance(7 * 24 * 3600_000);
    await kit.refreshToken();
    expect((await kit.payment(p)).status).toBe("ExpiredAndCancelled");
    expect(
      kit.emu
        .ledger()
        .filter((e) => e.id === p)
        .map((e) => e.kind),
    ).toEqual(["reserved", "expired"]);
    expect((await kit.call("POST", `/v10/payments/${p}/cancel`)).code).toBe("1300");
  });

  it("inactivity → CancelledByService (walks-away user never accepts)", async () => {
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031808");
    const p = id(await kit.initiate(posId));
    expect(kit.emu.userSimulation.accept(beaconId, "+4520031808").status).toBe(200);
    kit.emu.clock.advance(299_000);
    expect((await kit.payment(p)).status).toBe("IssuedToUser");
    kit.emu.clock.advance(1_000);
    expect((await kit.payment(p)).status).toBe("CancelledByService");
    expect((await kit.initiate(posId)).status).toBe(200);
  });

  it("insufficient funds: accept → CancelledByService, nothing reserved", async () => {
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031806");
    const p = id(await kit.initiate(posId));
    kit.emu.userSimulation.accept(beaconId, "+4520031806");
    kit.emu.clock.advance(10);
    expect((await kit.payment(p)).status).toBe("CancelledByService");
    expect(kit.emu.ledger().filter((e) => e.id === p)).toEqual([]);
  });

  it("slow to accept: Reserved only after 5 s of emulator time", async () => {
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031807");
    const p = id(await kit.initiate(posId));
    kit.emu.userSimulation.accept(beaconId, "+4520031807");
    kit.emu.clock.advance(5_000);
    expect((await kit.payment(p)).status).toBe("IssuedToUser");
    kit.emu.clock.advance(10);
    expect((await kit.payment(p)).status).toBe("Reserved");
  });

  it("restrictions: a debit-card user on a debit-disallowed payment is refused at reservation", async () => {
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031802");
    const p = id(
      await kit.initiate(posId, 3, {
        restrictions: { debitCardDisallowed: true, creditCardDisallowed: null },
      }),
    );
    expect((await kit.payment(p)).restrictions).toEqual({
      debitCardDisallowed: true,
      creditCardDisallowed: null,
    });
    kit.emu.userSimulation.accept(beaconId, "+4520031802");
    kit.emu.clock.advance(10);
    expect((await kit.payment(p)).status).toBe("CancelledByService");
  });

  it("prepared flow: Prepared → Paired (loyalty data) → ready → IssuedToUser → Reserved; 1303 on a second different ready", async () => {
    const { posId, beaconId } = await kit.createPos();
    const r = await kit.call("POST", "/v10/payments/prepare", { body: { posId, orderId: "prep-1" } });
    const p = id(r);
    expect(await kit.payment(p)).toMatchObject({ status: "Prepared", amount: null });
    expect((await kit.initiate(posId)).code).toBe("1301");
    kit.emu.userSimulation.checkin(beaconId, "+4520031804");
    expect(await kit.payment(p)).toMatchObject({
      status: "Paired",
      loyaltyIds: ["LOY4520031804"],
      customerToken: "CT4520031804",
    });
    const ready = {
      amount: 9.95,
      currencyCode: "DKK",
      plannedCaptureDelay: "None",
      merchantPaymentLabel: "loyalty",
    };
    expect((await kit.call("POST", `/v10/payments/${p}/ready`, { body: ready })).status).toBe(200);
    expect((await kit.call("POST", `/v10/payments/${p}/ready`, { body: ready })).status).toBe(200);
    expect((await kit.call("POST", `/v10/payments/${p}/ready`, { body: { ...ready, amount: 1 } })).code).toBe(
      "1303",
    );
    expect(await kit.payment(p)).toMatchObject({
      status: "IssuedToUser",
      amount: 9.95,
      merchantPaymentLabel: "loyalty",
    });
    kit.emu.userSimulation.accept(beaconId, "+4520031804");
    kit.emu.clock.advance(10);
    expect((await kit.payment(p)).status).toBe("Reserved");
  });

  it("ready on a payment that was not prepared → 1303; ready without a check-in → Initiated", async () => {
    const { posId } = await kit.createPos();
    const direct = id(await kit.initiate(posId));
    const body = { amount: 1, currencyCode: "EUR", plannedCaptureDelay: "LessThan24Hours" };
    expect((await kit.call("POST", `/v10/payments/${direct}/ready`, { body })).code).toBe("1303");
    await kit.call("POST", `/v10/payments/${direct}/cancel`);
    const prepared = id(
      await kit.call("POST", "/v10/payments/prepare", { body: { posId, orderId: "prep-2" } }),
    );
    expect(
      (await kit.call("POST", `/v10/payments/${prepared}/ready`, { body: { ...body, amount: 1.001 } })).code,
    ).toBe("1102");
    expect(
      (
        await kit.call("POST", `/v10/payments/${prepared}/ready`, {
          body: { ...body, merchantPaymentLabel: "" },
        })
      ).code,
    ).toBe("1117");
    expect((await kit.call("POST", `/v10/payments/${prepared}/ready`, { body })).status).toBe(200);
    expect(await kit.payment(prepared)).toMatchObject({
      status: "Initiated",
      currencyCode: "EUR",
      plannedCaptureDelay: "LessThan24Hours",
    });
  });

  it("404 without body for unknown payments on every payment endpoint", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const [m, path, body] of [
      ["GET", `/v10/payments/${unknown}`, undefined],
      ["POST", `/v10/payments/${unknown}/capture`, { amount: 1 }],
      ["POST", `/v10/payments/${unknown}/cancel`, undefined],
      [
        "POST",
        `/v10/payments/${unknown}/ready`,
        { amount: 1, currencyCode: "DKK", plannedCaptureDelay: "None" },
      ],
    ] as const) {
      const r = await kit.call(m, path, { body });
      expect([r.status, r.body]).toEqual([404, undefined]);
    }
  });

  it("1000 unknown or deleted PoS; 1204 store not activated", async () => {
    expect((await kit.initiate("00000000-0000-4000-8000-000000000000")).code).toBe("1000");
    const { posId } = await kit.createPos();
    await kit.call("DELETE", `/v10/pointofsales/${posId}`);
    expect((await kit.initiate(posId)).code).toBe("1000");
    const prep = await kit.call("POST", "/v10/payments/prepare", { body: { posId, orderId: "x" } });
    expect(prep.code).toBe("1000");
  });

  it("pollDelayInMs on every poll; polls faster than it are counted per client, not refused", async () => {
    const { posId } = await kit.createPos();
    const p = id(await kit.initiate(posId));
    const before = kit.emu.stats().earlyPolls[kit.emu.info.v10.clientId] ?? 0;
    await kit.payment(p);
    await kit.payment(p);
    kit.emu.clock.advance(10);
    const last = await kit.payment(p);
    expect(last.pollDelayInMs).toBe(10);
    expect(kit.emu.stats().earlyPolls[kit.emu.info.v10.clientId]).toBe(before + 1);
  });
});
