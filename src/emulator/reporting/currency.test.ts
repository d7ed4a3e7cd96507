import { afterEach, describe, expect, it } from "vitest";
import { o, SubsKit } from "../subscriptions/testkit.test-support.js";
import { type HttpsReceiver, startHttpsReceiver } from "../testing/httpsReceiver.js";
import { V10Kit } from "../v10/testkit.test-support.js";
import { ReportingKit } from "./testkit.test-support.js";

/**
 * Issue 29 defect 1: every money movement carries its own currency into the ledger, the reporting lines and a
 * transfer of that currency (one transfer per payment point, day and currency), whatever the merchant's
 * country: a EUR subscription charge of a Danish merchant, EUR and DKK point-of-sale payments at one store,
 * and the older point-of-sale interface (no currency field: the merchant's, DKK for `POSDK99999`).
 */

const FI_USER = "+358200318001";
const START = Date.parse("2026-03-02T10:00:00Z");

interface Line {
  type: string;
  amount: number;
  currencyCode: string;
  transferReference?: string | null;
}

let v10: V10Kit | undefined;
let rx: HttpsReceiver | undefined;
let subs: SubsKit | undefined;
let kit: ReportingKit | undefined;

afterEach(async () => {
  await subs?.close();
  await kit?.close();
  await v10?.close();
  await rx?.close();
  subs = kit = v10 = rx = undefined;
});

async function start(): Promise<{ v10: V10Kit; subs: SubsKit; kit: ReportingKit }> {
  rx = await startHttpsReceiver();
  v10 = await V10Kit.start({
    timeSource: () => 0,
    startTime: START,
    subscriptions: { callbackCa: rx.ca, callbackAllowLoopbackPorts: true },
  });
  subs = await SubsKit.on(v10.emu, rx);
  kit = ReportingKit.on(v10.emu);
  return { v10, subs, kit };
}

async function lines(k: ReportingKit, point: string, from: string, to: string): Promise<Line[]> {
  const pages = await k.walk(`/v1/paymentpoints/${point}/transactions`, { from, to });
  return pages.flatMap((p) => p.transactions as Line[]);
}

describe("emulator currencies (issue 29, defect 1)", () => {
  it("a EUR agreement's 2000.00 charge is EUR in the ledger, the report and its own transfer", async () => {
    const { v10: k10, subs: s, kit: rk } = await start();
    await s.useReceiver();
    const agreement = await s.activeAgreement(FI_USER, { currency: "EUR", country_code: "FI" });
    const asked = await s.requestPayments([s.payment(agreement, { amount: 2000, due_date: s.day(2) })]);
    expect(asked.status).toBe(202);
    // A DKK charge of the same provider on the same day, through a Danish agreement.
    const dk = await s.activeAgreement("+4520031801", { external_id: "agr-dk" });
    expect((await s.requestPayments([s.payment(dk, { amount: 10, due_date: s.day(2) })])).status).toBe(202);
    s.advance(2 * 86_400_000); // past 03:15 on the due date: both execute
    s.advance(86_400_000); // past the next day's transfer cut-off
    const event = await s.paymentEvent((e) => e.agreement_id === agreement && e.status === "Executed");
    expect(event.currency).toBe("EUR");

    const paid = k10.emu.ledger().filter((e) => e.interface === "subscriptions" && e.kind === "paid");
    expect(paid.map((e) => [e.amount, e.currency])).toEqual(
      expect.arrayContaining([
        [200_000, "EUR"],
        [1_000, "DKK"],
      ]),
    );
    await rk.login();
    const got = await lines(rk, s.pid, `${s.day(2)}T00:00:00Z`, `${s.day(3)}T00:00:00Z`);
    const payments = got.filter((l) => l.type === "Payment").map((l) => [l.amount, l.currencyCode]);
    expect(payments).toEqual(
      expect.arrayContaining([
        [2000, "EUR"],
        [10, "DKK"],
      ]),
    );
    // Each fee line is in its payment's currency.
    expect(got.filter((l) => l.type === "TransactionFee").map((l) => [l.amount, l.currencyCode])).toEqual(
      expect.arrayContaining([
        [-20, "EUR"],
        [-0.1, "DKK"],
      ]),
    );
    const transfers = rk.emu.reporting.transfers().filter((t) => t.paymentPointId === s.pid);
    expect(transfers.map((t) => [t.transferReferenceDate, t.currencyCode, t.amount]).sort()).toEqual([
      [s.day(3), "DKK", 990],
      [s.day(3), "EUR", 198_000],
    ]);
    const refs = await rk.get(`/v1/paymentpoints/${s.pid}/transfer-references`, {
      from: s.day(3),
      to: s.day(3),
    });
    const listed = (o(refs.body).transferReferences as Record<string, unknown>[]).map((r) => [
      r.currencyCode,
      r.totalTransferredAmount,
    ]);
    expect(listed.sort()).toEqual([
      ["DKK", 9.9],
      ["EUR", 1980],
    ]);
    // A transfer's contents are its currency's lines only.
    const eur = transfers.find((t) => t.currencyCode === "EUR");
    const contents = await rk.walk(`/v2/paymentpoints/${s.pid}/transfers/${eur?.transferReference}`);
    const inEur = contents.flatMap((p) => p.transactions as Line[]);
    expect(inEur.map((l) => [l.type, l.amount, l.currencyCode])).toEqual([
      ["Payment", 2000, "EUR"],
      ["TransactionFee", -20, "EUR"],
    ]);
  });

  it("point-of-sale payments (V10 in EUR and DKK, the older interface) carry their currency to transfers", async () => {
    const { v10: k10, kit: rk } = await start();
    const { posId, beaconId } = await k10.createPos();
    const eur = await k10.reserved(posId, beaconId, 20, "+4520031801", { currencyCode: "EUR" });
    expect((await k10.call("POST", `/v10/payments/${eur}/capture`, { body: { amount: 20 } })).status).toBe(
      200,
    );
    const dkk = await k10.reserved(posId, beaconId, 30);
    expect((await k10.call("POST", `/v10/payments/${dkk}/capture`, { body: { amount: 30 } })).status).toBe(
      200,
    );

    const unit = "100000000000001";
    const pos = { PoSId: "vm-legacy-1" };
    expect((await rk.legacy("RegisterPoS", { ...pos, Name: "Legacy vending" })).status).toBe(200);
    expect((await rk.legacy("AssignPoSUnitIdToPos", { ...pos, PoSUnitId: unit })).status).toBe(200);
    const started = await rk.legacy("PaymentStart", {
      ...pos,
      OrderId: "L-1",
      Amount: "10.00",
      BulkRef: "",
      Action: "Start",
      CustomerTokenCalc: 1,
      HMAC: rk.legacyHmac(pos.PoSId, "L-1", "10.00"),
    });
    expect(started.status).toBe(200);
    k10.emu.userSimulation.checkin(unit, "+4520031801");
    expect(k10.emu.userSimulation.accept(unit, "+4520031801").status).toBe(200);
    k10.emu.clock.advance(10_000);

    const money = k10.emu.ledger().filter((e) => e.kind === "captured" || e.kind === "paid");
    expect(money.map((e) => [e.interface, e.amount, e.currency])).toEqual([
      ["v10", 2_000, "EUR"],
      ["v10", 3_000, "DKK"],
      ["legacy", 1_000, "DKK"],
    ]);
    const point = k10.emu.info.reporting.paymentPointId;
    await rk.login();
    const got = await lines(rk, point, "2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z");
    expect(got.filter((l) => l.type === "Payment").map((l) => [l.amount, l.currencyCode])).toEqual([
      [20, "EUR"],
      [30, "DKK"],
      [10, "DKK"],
    ]);
    const made = k10.emu.reporting.advanceToCutoff(1);
    expect(made.map((t) => [t.paymentPointId, t.currencyCode, t.amount, t.transactions])).toEqual([
      [point, "DKK", 4_000 - 23 - 8, 4],
      [point, "EUR", 2_000 - 15, 2],
    ]);
  });
});
