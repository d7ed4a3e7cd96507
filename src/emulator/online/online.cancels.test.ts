/**
 * The emulator's online payments (seed 002 §Online payments): cancels before and after authorization,
 * reservation expiry and the rules for updating a payment.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../index.js";
import { hasOpenssl } from "../testing/httpsReceiver.js";
import { CREDIT, onlineHarness } from "./online.test-support.js";

describe.skipIf(!hasOpenssl())("online payments: cancels and reservation expiry over HTTP", () => {
  let emu: Emulator;
  const { open, close, call, start, simulate, get, ts, authorized } = onlineHarness();

  beforeAll(async () => {
    ({ emu } = await open());
  });
  afterAll(close);

  it("cancel before the user acts; reservation expiry after reservationExpireTimestamp; update rules", async () => {
    const early = await start();
    expect(
      (
        await call("PATCH", `/api/v1/payments/${early}`, {
          reservationExpireTimestamp: new Date(emu.clock.now() + 3600_000).toISOString(),
        })
      ).status,
    ).toBe(409);
    expect(
      (await call("PATCH", `/api/v1/payments/${early}`, { redirectFromServiceUrl: "http://x" })).body,
    ).toMatchObject({ field: "redirectFromServiceUrl" });
    expect(
      (
        await call("PATCH", `/api/v1/payments/${early}`, {
          redirectFromServiceUrl: "https://shop.example/new",
        })
      ).status,
    ).toBe(204);
    expect(await get(early)).toMatchObject({ redirectFromServiceUrl: "https://shop.example/new" });
    expect(
      (
        await call("POST", `/api/v1/payments/${early}/cancels`, {
          amount: 1000,
          cancelIdentifier: "c",
          timestamp: ts(),
        })
      ).status,
    ).toBe(200);
    expect(await get(early)).toMatchObject({ status: "Cancelled" });
    expect((await simulate(early, CREDIT)).status).toBe(409);
    expect(
      (
        await call("POST", `/api/v1/payments/${early}/refunds`, {
          amount: 1,
          refundIdentifier: "r",
          timestamp: ts(),
        })
      ).status,
    ).toBe(409);
    const part = await authorized();
    const none = await authorized();
    const expire = new Date(emu.clock.now() + 3600_000).toISOString();
    for (const p of [part.id, none.id])
      expect(
        (await call("PATCH", `/api/v1/payments/${p}`, { reservationExpireTimestamp: expire })).status,
      ).toBe(204);
    await call("POST", `/api/v1/payments/${part.id}/captures`, {
      amount: 100,
      captureIdentifier: "c1",
      timestamp: ts(),
      authorizationAttemptId: null,
    });
    emu.clock.advance(3600_000);
    expect(await get(part.id)).toMatchObject({
      status: "Captured",
      capturedAmount: 100,
      expiredAmount: 900,
    });
    expect(await get(none.id)).toMatchObject({ status: "ReservationExpired", expiredAmount: 1000 });
    const kinds = emu
      .ledger()
      .filter((e) => e.id === none.id)
      .map((e) => e.kind);
    expect(kinds).toEqual(["reserved", "expired"]);
    expect(
      (
        await call("POST", `/api/v1/payments/${none.id}/captures`, {
          amount: 1,
          captureIdentifier: "c2",
          timestamp: ts(),
        })
      ).status,
    ).toBe(409);
  });

  it("Authorized → Cancelled by cancels of the whole amount; AwaitingAuthorization → Cancelled", async () => {
    const { id } = await authorized();
    const cancel = (p: string, amount: number, cancelIdentifier: string) =>
      call("POST", `/api/v1/payments/${p}/cancels`, { amount, cancelIdentifier, timestamp: ts() });
    expect((await cancel(id, 400, "a")).status).toBe(200);
    expect(await get(id)).toMatchObject({ status: "Authorized", cancelledAmount: 400 });
    expect(await cancel(id, 601, "b")).toMatchObject({ status: 409, body: { code: "AmountTooHigh" } });
    expect((await cancel(id, 600, "b")).status).toBe(200);
    expect(await get(id)).toMatchObject({ status: "Cancelled", cancelledAmount: 1000, capturedAmount: 0 });
    expect(
      emu
        .ledger()
        .filter((e) => e.paymentId === id)
        .map((e) => [e.kind, e.amount]),
    ).toEqual([
      ["cancelled", 400],
      ["cancelled", 600],
    ]);
    const waiting = await start();
    const s = await simulate(waiting, CREDIT);
    expect((await cancel(waiting, 1000, "c")).status).toBe(200);
    expect(await get(waiting)).toMatchObject({ status: "Cancelled" });
    const late = await call(
      "PATCH",
      `/api/v1/payments/${waiting}/authorizationattempts/${s.body.authorizationAttemptId}`,
      { succeeded: true },
    );
    expect(late).toMatchObject({ status: 409, body: { code: "InvalidState" } });
    expect(emu.ledger().filter((e) => e.id === waiting || e.paymentId === waiting)).toEqual([]);
  });
});
