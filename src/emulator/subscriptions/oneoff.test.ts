import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hasOpenssl } from "../testing/httpsReceiver.js";
import { FAILING_USER, o, SubsKit } from "./testkit.test-support.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: subscriptions one-off/refund tests skipped");

describe.skipIf(skip)("subscriptions: one-off payments, refunds, attachments (seed 000)", () => {
  let kit: SubsKit;
  beforeEach(async () => {
    kit = await SubsKit.start();
    await kit.useReceiver();
  });
  afterEach(async () => {
    await kit?.close();
  });

  const oneOffBody = (extra: Record<string, unknown> = {}) => ({
    amount: "30.00",
    description: "Extra bag of beans",
    external_id: "oo",
    links: [{ rel: "user-redirect", href: "https://merchant.example/r" }],
    ...extra,
  });

  async function oneOff(agreementId: string, extra: Record<string, unknown> = {}): Promise<string> {
    const r = await kit.api("POST", `/agreements/${agreementId}/oneoffpayments`, oneOffBody(extra));
    if (r.status !== 201) throw new Error(`one-off: ${r.status} ${JSON.stringify(r.body)}`);
    return String(o(r.body).id);
  }

  const immediate = (id: string, code: number) =>
    kit.rx.waitFor(
      (r) =>
        r.path === "/payments" &&
        Array.isArray(r.json) &&
        r.json.some((e) => o(e).payment_id === id && o(e).status_code === code),
    );

  it("validates the request; needs an Active agreement; landing link", async () => {
    const a = await kit.activeAgreement();
    for (const bad of [
      { amount: "0.00" },
      { description: "x".repeat(61) },
      { external_id: "x".repeat(65) },
      { links: [] },
      { links: [{ rel: "user-redirect", href: "http://merchant.example/r" }] },
      { expiration_timeout_minutes: 0 },
      { expiration_timeout_minutes: 181441 },
      { auto_reserve: "yes" },
    ]) {
      expect(
        (await kit.api("POST", `/agreements/${a}/oneoffpayments`, oneOffBody(bad))).status,
        JSON.stringify(bad),
      ).toBe(400);
    }
    const pending = String((await kit.createAgreement()).id);
    expect((await kit.api("POST", `/agreements/${pending}/oneoffpayments`, oneOffBody())).status).toBe(409);
    const r = await kit.api("POST", `/agreements/${a}/oneoffpayments`, oneOffBody());
    expect(r.status).toBe(201);
    const link = (o(r.body).links as Record<string, unknown>[])[0];
    expect(link?.rel).toBe("mobile-pay");
    expect(new URL(String(link?.href)).searchParams.get("flow")).toBe("oneoff");
  });

  it("user accepts → Reserved 0 at once; capture once, not above the amount; ledger", async () => {
    const a = await kit.activeAgreement();
    const id = await oneOff(a);
    expect(kit.rx.received.filter((r) => r.path === "/payments")).toEqual([]);
    expect((await kit.api("POST", `/agreements/${a}/oneoffpayments/${id}/capture`)).status).toBe(409);
    await kit.sim(`oneoffpayments/${id}/accept`);
    const cb = await immediate(id, 0);
    expect(o((cb.json as unknown[])[0])).toMatchObject({
      status: "Reserved",
      status_text: "Payment successfully reserved.",
      payment_type: "OneOff",
      amount: 30,
    });
    expect(
      (await kit.api("POST", `/agreements/${a}/oneoffpayments/${id}/capture`, { amount: "30.01" })).status,
    ).toBe(409);
    expect(
      (await kit.api("POST", `/agreements/${a}/oneoffpayments/${id}/capture`, { amount: "20.00" })).status,
    ).toBe(204);
    expect((await kit.api("POST", `/agreements/${a}/oneoffpayments/${id}/capture`)).status).toBe(409);
    expect((await kit.api("DELETE", `/agreements/${a}/oneoffpayments/${id}`)).status).toBe(409);
    expect(
      kit.emu
        .ledger()
        .filter((e) => e.id === id)
        .map((e) => [e.kind, e.amount]),
    ).toEqual([
      ["reserved", 3000],
      ["captured", 2000],
    ]);
  });

  it("user rejects → Rejected 50001 at once; cancel 204 of a Requested one", async () => {
    const a = await kit.activeAgreement();
    const id = await oneOff(a);
    await kit.sim(`oneoffpayments/${id}/reject`);
    const cb = await immediate(id, 50001);
    expect(o((cb.json as unknown[])[0])).toMatchObject({
      status: "Rejected",
      status_text: "Rejected by user.",
    });
    const other = await oneOff(a, { external_id: "oo2" });
    expect((await kit.api("DELETE", `/agreements/${a}/oneoffpayments/${other}`)).status).toBe(204);
    expect((await kit.sim(`oneoffpayments/${other}/accept`)).status).toBe(409);
  });

  it("auto_reserve: reserved without the user; a failing card gives 50013 and stays Requested, then expires 50008", async () => {
    const a = await kit.activeAgreement();
    const ok = await oneOff(a, { auto_reserve: true });
    await immediate(ok, 0);
    const f = await kit.activeAgreement(FAILING_USER);
    const failing = await oneOff(f, { auto_reserve: true, expiration_timeout_minutes: 10 });
    const cb = await immediate(failing, 50013);
    expect(o((cb.json as unknown[])[0])).toMatchObject({
      status: "Requested",
      status_text: "Automatic reservation failed. User action is needed.",
    });
    expect(o((await kit.api("GET", `/agreements/${f}/oneoffpayments/${failing}`)).body).status).toBe(
      "Requested",
    );
    kit.advance(10 * 60_000);
    kit.advance(120_000);
    const exp = await kit.paymentEvent((e) => e.payment_id === failing && e.status_code === 50008);
    expect(exp).toMatchObject({ status: "Expired", status_text: "Expired by system." });
  });

  it("a Reserved one-off cancelled gives the money back; uncaptured it expires after 7 days", async () => {
    const a = await kit.activeAgreement();
    const c = await oneOff(a, { external_id: "c" });
    const e = await oneOff(a, { external_id: "e", expiration_timeout_minutes: 181440 });
    await kit.sim(`oneoffpayments/${c}/accept`);
    await kit.sim(`oneoffpayments/${e}/accept`);
    expect((await kit.api("DELETE", `/agreements/${a}/oneoffpayments/${c}`)).status).toBe(204);
    kit.advance(7 * 86_400_000 - 1000);
    expect(o((await kit.api("GET", `/agreements/${a}/oneoffpayments/${e}`)).body).status).toBe("Reserved");
    kit.advance(1000);
    expect(o((await kit.api("GET", `/agreements/${a}/oneoffpayments/${e}`)).body).status).toBe("Expired");
    expect((await kit.api("POST", `/agreements/${a}/oneoffpayments/${e}/capture`)).status).toBe(409);
    expect(kit.emu.ledger().map((x) => [x.id, x.kind])).toEqual([
      [c, "reserved"],
      [e, "reserved"],
      [c, "cancelled"],
      [e, "expired"],
    ]);
  });

  it("refunds: Issued 0, partial until zero (60001, 60002), 60003, 60004, 60005, 60006, 60007", async () => {
    const a = await kit.activeAgreement();
    const id = await oneOff(a, { amount: "100.00" });
    await kit.sim(`oneoffpayments/${id}/accept`);
    const notCaptured = await kit.api("POST", `/agreements/${a}/payments/${id}/refunds`, {
      status_callback_url: `${kit.rx.url}/refunds`,
      external_id: "r0",
    });
    expect(notCaptured.status).toBe(202);
    await kit.api("POST", `/agreements/${a}/oneoffpayments/${id}/capture`);
    const refund = (amount: unknown, ext: string, paymentId = id) =>
      kit.api("POST", `/agreements/${a}/payments/${paymentId}/refunds`, {
        ...(amount === undefined ? {} : { amount }),
        status_callback_url: `${kit.rx.url}/refunds`,
        external_id: ext,
      });
    const r1 = await refund("40.00", "r1");
    expect(r1.status).toBe(202);
    expect(o(r1.body)).toMatchObject({
      amount: "40.00",
      external_id: "r1",
      status_callback_url: `${kit.rx.url}/refunds`,
    });
    await refund("60.01", "r2");
    await kit.admin("POST", "system-declines", { refunds: 1 });
    await refund("1.00", "r3");
    await refund(undefined, "r4");
    await refund("0.01", "r5");
    await refund("5.00", "r6", "00000000-0000-0000-0000-000000000009");
    expect((await refund("0.00", "bad")).status).toBe(400);
    expect(
      (
        await kit.api("POST", `/agreements/${a}/payments/${id}/refunds`, {
          status_callback_url: "http://x.example/",
        })
      ).status,
    ).toBe(400);
    const got = await kit.rx.waitForCount(7, (r) => r.path === "/refunds");
    const byExt = new Map(got.map((r) => [String(o(r.json).external_id), o(r.json)]));
    expect(byExt.get("r0")).toMatchObject({
      status: "Declined",
      status_code: 60004,
      status_text: "Payment cannot be refunded.",
    });
    expect(byExt.get("r1")).toMatchObject({
      status: "Issued",
      status_code: 0,
      status_text: null,
      amount: "40.00",
      currency: "DKK",
      payment_id: id,
      agreement_id: a,
    });
    expect(byExt.get("r2")).toMatchObject({
      status_code: 60002,
      status_text: "The total sum of previous Refunds cannot exceed the original payment amount.",
    });
    expect(byExt.get("r3")).toMatchObject({
      status_code: 60005,
      status_text: "Refund was declined by system.",
    });
    expect(byExt.get("r4")).toMatchObject({ status_code: 0, amount: "60.00" });
    expect(byExt.get("r5")).toMatchObject({ status_code: 60001, status_text: "Payment is fully refunded." });
    expect(byExt.get("r6")).toMatchObject({ status_code: 60003, status_text: "Payment was not found." });
    expect(
      kit.emu
        .ledger()
        .filter((e) => e.kind === "refunded")
        .map((e) => e.amount),
    ).toEqual([4000, 6000]);

    const late = await oneOff(a, { external_id: "late" });
    await kit.sim(`oneoffpayments/${late}/accept`);
    await kit.api("POST", `/agreements/${a}/oneoffpayments/${late}/capture`);
    kit.advance(30 * 86_400_000);
    await refund("1.00", "in-window", late);
    kit.advance(1000);
    await refund("1.00", "r7", late);
    const phone = "+4520031802";
    const instantAgreement = await kit.activeAgreement(phone);
    await kit.sim("user", { phoneNumber: phone, instantTransfer: true });
    const inst = String(
      o(
        (
          await kit.api(
            "POST",
            `/agreements/${instantAgreement}/oneoffpayments`,
            oneOffBody({ external_id: "i" }),
          )
        ).body,
      ).id,
    );
    await kit.sim(`oneoffpayments/${inst}/accept`);
    await kit.api("POST", `/agreements/${instantAgreement}/oneoffpayments/${inst}/capture`);
    await kit.api("POST", `/agreements/${instantAgreement}/payments/${inst}/refunds`, {
      status_callback_url: `${kit.rx.url}/refunds`,
      external_id: "r8",
    });
    const more = await kit.rx.waitForCount(10, (r) => r.path === "/refunds");
    const m = new Map(more.map((r) => [String(o(r.json).external_id), o(r.json)]));
    expect(m.get("in-window")).toMatchObject({ status_code: 0 });
    expect(m.get("r7")).toMatchObject({
      status_code: 60006,
      status_text: "Cannot refund payments that are older than 30 days.",
    });
    expect(m.get("r8")).toMatchObject({
      status_code: 60007,
      status_text: "Cannot refund instantly transferred payments.",
    });
  });

  it("attachments V2: put (overwrites), get, pdf when generated, delete; validation", async () => {
    const a = await kit.activeAgreement();
    const id = await oneOff(a);
    const details = {
      total_amount: 30,
      document_title: "Receipt",
      invoice_number: "INV-7",
      articles: [{ article_description: "Beans", total_price_including_vat: 30 }],
      comment: "Thanks\\nSee you",
    };
    const base = `/payments/${id}/attachment`;
    expect((await kit.api("GET", base)).status).toBe(404);
    expect(
      (
        await kit.api("PUT", base, {
          generate_pdf: true,
          external_attachment_url: "https://m.example/a.pdf",
          attachment_details: details,
        })
      ).status,
    ).toBe(400);
    expect((await kit.api("PUT", base, { attachment_details: { ...details, articles: [] } })).status).toBe(
      400,
    );
    expect(
      (await kit.api("PUT", base, { attachment_details: { ...details, document_title: "x".repeat(61) } }))
        .status,
    ).toBe(400);
    expect(
      (
        await kit.api("PUT", base, {
          external_attachment_url: "https://m.example/a.pdf",
          attachment_details: details,
        })
      ).status,
    ).toBe(204);
    expect((await kit.api("GET", `${base}/pdf`)).status).toBe(404);
    expect((await kit.api("PUT", base, { generate_pdf: true, attachment_details: details })).status).toBe(
      204,
    );
    expect(o((await kit.api("GET", base)).body)).toMatchObject({ generate_pdf: true });
    const pdf = await kit.api("GET", `${base}/pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers["content-type"]).toBe("application/pdf");
    expect(String(pdf.body)).toMatch(/^%PDF-1\.4[\s\S]*Fakturanummer[\s\S]*%%EOF\n$/);
    expect((await kit.api("DELETE", base)).status).toBe(204);
    expect((await kit.api("GET", base)).status).toBe(404);
    expect(
      (
        await kit.api("PUT", "/payments/00000000-0000-0000-0000-000000000009/attachment", {
          attachment_details: details,
        })
      ).status,
    ).toBe(404);
  });
});
