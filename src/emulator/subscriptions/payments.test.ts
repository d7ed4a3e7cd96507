import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hasOpenssl } from "../testing/httpsReceiver.js";
import { DK_USER, o, SubsKit } from "./testkit.test-support.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: subscriptions payment tests skipped");

describe.skipIf(skip)("subscriptions: payment requests (seed 000)", () => {
  let kit: SubsKit;
  beforeEach(async () => {
    kit = await SubsKit.start({
      seed: {
        subscriptions: [{ clientId: "other", clientSecret: "other-secret", providers: [{ name: "Other" }] }],
      },
    });
    await kit.useReceiver();
  });
  afterEach(async () => {
    await kit?.close();
  });

  /** Runs validation and the next batch, then waits for the event of `paymentId`. */
  async function batched(paymentId: string): Promise<Record<string, unknown>> {
    kit.advance(120_000);
    return kit.paymentEvent((e) => e.payment_id === paymentId);
  }

  it("answers 202 with pending and rejected payments; refuses empty, oversized and early requests", async () => {
    const id = await kit.activeAgreement();
    const r = await kit.requestPayments([
      kit.payment(id),
      { ...kit.payment(id, { external_id: "bad" }), due_date: "05-03-2026" },
      { ...kit.payment(id, { external_id: "x".repeat(65) }) },
    ]);
    expect(r.status).toBe(202);
    expect((o(r.body).pending_payments as unknown[]).length).toBe(1);
    const rejected = o(r.body).rejected_payments as Record<string, unknown>[];
    expect(rejected.map((x) => x.external_id)).toEqual(["bad", "x".repeat(65)]);
    expect(String(rejected[0]?.error_description)).toMatch(/due_date/);
    expect((await kit.requestPayments([])).status).toBe(400);
    expect((await kit.api("POST", "/paymentrequests", { not: "an array" })).status).toBe(400);
    const many = Array.from({ length: 2001 }, (_, i) => kit.payment(id, { external_id: `m${i}` }));
    expect((await kit.requestPayments(many)).status).toBe(400);

    const other = await kit.fetchToken("other", "other-secret");
    const lookup = await kit.call("GET", "/api/merchants/me", undefined, other);
    const otherPid = String(
      o((o((lookup.body as unknown[])[0]).SubscriptionProviders as unknown[])[0]).SubscriptionProviderId,
    );
    const early = await kit.call(
      "POST",
      `/api/providers/${otherPid}/paymentrequests`,
      [kit.payment(id)],
      other,
    );
    expect(early.status).toBe(400);
    expect(JSON.stringify(early.body)).toMatch(/callback URL/);
    expect(
      (await kit.call("POST", `/api/providers/${kit.pid}/paymentrequests`, [kit.payment(id)], other)).status,
    ).toBe(404);
  });

  it("declines asynchronously with every validation code, in one batched call", async () => {
    const active = await kit.activeAgreement();
    const pending = String((await kit.createAgreement()).id);
    const blocked = await kit.activeAgreement("+4520031803");
    await kit.sim("user", { phoneNumber: "+4520031803", blocked: true });
    await kit.admin("POST", "system-declines", { payments: 1 });
    const items = [
      kit.payment(pending, { external_id: "c50003" }),
      kit.payment(active, { external_id: "c50006" }),
      kit.payment(active, { external_id: "dup" }),
      kit.payment(active, { external_id: "dup" }),
      kit.payment(active, { external_id: "c50006max", amount: "60000.01" }),
      kit.payment(active, {
        external_id: "c50006inv",
        invoice: { due_date: kit.day(401), invoice_number: "I-1" },
      }),
      kit.payment(blocked, { external_id: "c50009" }),
      kit.payment("00000000-0000-0000-0000-000000000001", { external_id: "c50010" }),
      kit.payment(active, { external_id: "c50011", due_date: kit.day(0) }),
      kit.payment(active, { external_id: "c50012", due_date: kit.day(127) }),
      kit.payment(active, { external_id: "ok", due_date: kit.day(126) }),
    ];
    const r = await kit.requestPayments(items);
    expect(r.status).toBe(202);
    const ids = (o(r.body).pending_payments as Record<string, unknown>[]).map((p) => String(p.payment_id));
    expect(ids.length).toBe(items.length);
    kit.advance(120_000);
    await kit.rx.waitFor((x) => x.path === "/payments");
    const calls = kit.rx.received.filter((x) => x.path === "/payments");
    expect(calls.length).toBe(1);
    const byExt = new Map<string, Record<string, unknown>[]>();
    for (const e of kit.paymentEvents())
      byExt.set(String(e.external_id), [...(byExt.get(String(e.external_id)) ?? []), e]);
    const code = (ext: string) => byExt.get(ext)?.map((e) => e.status_code);
    expect(byExt.get("ok"), JSON.stringify(byExt.get("ok"))).toBeUndefined();
    expect(code("c50003")).toEqual([50003]);
    expect(code("dup")).toEqual([50004]);
    expect(code("c50006")).toEqual([50006]);
    expect(code("c50006max")).toEqual([50006]);
    expect(code("c50006inv")).toEqual([50006]);
    expect(code("c50009")).toEqual([50009]);
    expect(code("c50010")).toEqual([50010]);
    expect(code("c50011")).toEqual([50011]);
    expect(code("c50012")).toEqual([50012]);
    const e = byExt.get("c50011")?.[0];
    expect(e).toMatchObject({
      status: "Declined",
      status_text: "Due date of the payment must be at least 1 day in the future.",
      payment_type: "Regular",
      currency: "DKK",
      amount: 49.5,
    });
    expect(byExt.get("c50003")?.[0]?.status_text).toBe("Declined by system: Agreement is not Active state.");
    expect(byExt.get("c50010")?.[0]?.status_text).toBe("Agreement does not exist.");
  });

  it("executes after 03:15 on the due date (0), records the charge, and batches at most 1000 events per call", async () => {
    const id = await kit.activeAgreement();
    const r = await kit.requestPayments([kit.payment(id, { amount: "120.00" })]);
    const pid = String(o((o(r.body).pending_payments as unknown[])[0]).payment_id);
    await kit.admin("POST", "advance-to", { date: kit.day(3), time: "03:14" });
    expect(o((await kit.api("GET", `/agreements/${id}/paymentrequests/${pid}`)).body).status).toBe("Pending");
    await kit.admin("POST", "advance-to", { time: "03:15" });
    const e = await batched(pid);
    expect(e).toMatchObject({
      status: "Executed",
      status_code: 0,
      status_text: null,
      amount: 120,
      payment_date: kit.day(3),
    });
    const paid = kit.emu.ledger().filter((x) => x.id === pid);
    expect(paid).toMatchObject([
      { interface: "subscriptions", kind: "paid", amount: 12000, merchant: "DK12345678", point: kit.pid },
    ]);
    expect(paid[0]?.at).toBe(Date.parse(`${kit.day(3)}T03:15:00Z`));
    const refund = await kit.api("POST", `/agreements/${id}/payments/${pid}/refunds`, {
      status_callback_url: `${kit.rx.url}/refunds`,
    });
    expect(refund.status).toBe(202);
    const issued = await kit.rx.waitFor((x) => x.path === "/refunds");
    expect(o(issued.json)).toMatchObject({
      status: "Issued",
      status_code: 0,
      amount: "120.00",
      payment_id: pid,
    });
    expect(
      kit.emu
        .ledger()
        .filter((x) => x.paymentId === pid)
        .map((x) => [x.kind, x.amount]),
    ).toEqual([["refunded", 12000]]);

    const many = Array.from({ length: 1001 }, (_, i) =>
      kit.payment("00000000-0000-0000-0000-000000000002", { external_id: `n${i}` }),
    );
    await kit.requestPayments(many);
    kit.advance(120_000);
    await kit.rx.waitFor((x) => Array.isArray(x.json) && x.json.length === 1000);
    kit.advance(120_000);
    await kit.rx.waitFor((x) => Array.isArray(x.json) && o(x.json[0]).external_id === "n1000");
  });

  it("user rejects in the 8-to-1 day window (50001); merchant declines (50002)", async () => {
    const id = await kit.activeAgreement();
    const r = await kit.requestPayments([
      kit.payment(id, { external_id: "a" }),
      kit.payment(id, { external_id: "b" }),
      kit.payment(id, { external_id: "far", due_date: kit.day(20) }),
    ]);
    const [a, b, far] = (o(r.body).pending_payments as Record<string, unknown>[]).map((p) =>
      String(p.payment_id),
    );
    kit.advance(0);
    expect((await kit.sim(`payments/${far}/reject`)).status).toBe(409);
    expect((await kit.sim(`payments/${a}/reject`)).status).toBe(200);
    expect((await kit.api("DELETE", `/agreements/${id}/paymentrequests/${String(b)}`)).status).toBe(204);
    expect((await kit.api("DELETE", `/agreements/${id}/paymentrequests/${String(b)}`)).status).toBe(409);
    expect(await batched(String(a))).toMatchObject({
      status: "Rejected",
      status_code: 50001,
      status_text: "Rejected by user.",
    });
    expect(kit.paymentEvents().find((e) => e.payment_id === b)).toMatchObject({
      status: "Declined",
      status_code: 50002,
      status_text: "Declined by merchant.",
    });
  });

  it("agreement cancel: merchant → Declined 50005, user → Rejected 50005", async () => {
    const m = await kit.activeAgreement();
    const u = await kit.activeAgreement("+4520031802");
    const r = await kit.requestPayments([kit.payment(m), kit.payment(u)]);
    const [pm, pu] = (o(r.body).pending_payments as Record<string, unknown>[]).map((p) =>
      String(p.payment_id),
    );
    kit.advance(0);
    await kit.api("PATCH", `/agreements/${m}`, [{ op: "replace", path: "/status", value: "Canceled" }]);
    await kit.sim(`agreements/${u}/cancel`);
    expect(await batched(String(pm))).toMatchObject({ status: "Declined", status_code: 50005 });
    expect(kit.paymentEvents().find((e) => e.payment_id === pu)).toMatchObject({
      status: "Rejected",
      status_code: 50005,
      status_text: "Declined by system: Agreement was canceled.",
    });
  });

  it("a failing card is retried at 06:00, 13:30, 18:00, 20:00, 22:30; Failed 50000 after 23:59", async () => {
    const phone = "+4520031804";
    const id = await kit.activeAgreement(phone);
    await kit.sim("user", { phoneNumber: phone, cardFails: true });
    const r = await kit.requestPayments([
      kit.payment(id, { external_id: "f" }),
      kit.payment(id, { external_id: "g" }),
    ]);
    const [f, g] = (o(r.body).pending_payments as Record<string, unknown>[]).map((p) => String(p.payment_id));
    await kit.admin("POST", "advance-to", { date: kit.day(3), time: "12:00" });
    kit.advance(120_000);
    expect(kit.paymentEvents().filter((e) => e.payment_id === f || e.payment_id === g)).toEqual([]);
    // g: the card is fixed before the 13:30 run
    await kit.api("DELETE", `/agreements/${id}/paymentrequests/${String(f)}`).catch(() => undefined);
    await kit.sim("user", { phoneNumber: phone, cardFails: false });
    await kit.admin("POST", "advance-to", { time: "13:30" });
    expect(kit.emu.ledger().find((x) => x.id === g)?.at).toBe(Date.parse(`${kit.day(3)}T13:30:00Z`));
    expect(await batched(String(g))).toMatchObject({ status: "Executed", status_code: 0 });
  });

  it("without grace the cycle runs once; with grace_period_days it repeats; Failed 50000 after 23:59 of the last day", async () => {
    const phone = "+4520031804";
    const id = await kit.activeAgreement(phone);
    await kit.sim("user", { phoneNumber: phone, cardFails: true });
    const r = await kit.requestPayments([
      kit.payment(id, { external_id: "none" }),
      kit.payment(id, { external_id: "grace", grace_period_days: 2 }),
    ]);
    const [none, grace] = (o(r.body).pending_payments as Record<string, unknown>[]).map((p) =>
      String(p.payment_id),
    );
    await kit.admin("POST", "advance-to", { date: kit.day(3), time: "23:58" });
    kit.advance(0);
    expect(kit.paymentEvents().find((e) => e.payment_id === none)).toBeUndefined();
    await kit.admin("POST", "advance-to", { time: "23:59" });
    expect(await batched(String(none))).toMatchObject({
      status: "Failed",
      status_code: 50000,
      status_text: null,
    });
    await kit.admin("POST", "advance-to", { date: kit.day(5), time: "19:00" });
    expect(kit.paymentEvents().find((e) => e.payment_id === grace)).toBeUndefined();
    await kit.sim("user", { phoneNumber: phone, cardFails: false });
    await kit.admin("POST", "advance-to", { time: "20:00" });
    expect(kit.emu.ledger().find((x) => x.id === grace)?.at).toBe(Date.parse(`${kit.day(5)}T20:00:00Z`));
    expect(await batched(String(grace))).toMatchObject({ status: "Executed", payment_date: kit.day(5) });
  });

  it("grace_period_days: Failed after 23:59 of the last grace day", async () => {
    const phone = "+4520031804";
    const id = await kit.activeAgreement(phone);
    await kit.sim("user", { phoneNumber: phone, cardFails: true });
    const r = await kit.requestPayments([kit.payment(id, { external_id: "g3", grace_period_days: 3 })]);
    const pid = String(o((o(r.body).pending_payments as unknown[])[0]).payment_id);
    await kit.admin("POST", "advance-to", { date: kit.day(6), time: "23:58" });
    kit.advance(120_000);
    expect(kit.paymentEvents().find((e) => e.payment_id === pid)).toBeUndefined();
    const e = await batched(pid);
    expect(e).toMatchObject({ status: "Failed", status_code: 50000 });
    expect((await kit.requestPayments([kit.payment(id, { grace_period_days: 4 })])).body).toMatchObject({
      pending_payments: [],
    });
  });

  it("changes the amount by JSON Patch: decrease only, compared with the original", async () => {
    const id = await kit.activeAgreement();
    const r = await kit.requestPayments([kit.payment(id, { amount: "100.00" })]);
    const pid = String(o((o(r.body).pending_payments as unknown[])[0]).payment_id);
    kit.advance(0);
    const patch = (value: unknown, path = "/amount") =>
      kit.api("PATCH", `/agreements/${id}/paymentrequests/${pid}`, [{ op: "replace", path, value }]);
    expect((await patch("80.00")).status).toBe(204);
    expect((await patch("100.00")).status).toBe(204);
    expect((await patch("100.01")).status).toBe(409);
    expect((await patch("1.00", "/due_date")).status).toBe(400);
    expect(
      (await kit.api("PATCH", `/agreements/${id}/paymentrequests/${pid}`, { op: "replace" })).status,
    ).toBe(400);
    expect((await patch(75.25)).status).toBe(204);
    await kit.admin("POST", "advance-to", { date: kit.day(3), time: "03:15" });
    expect(await batched(pid)).toMatchObject({ status: "Executed", amount: 75.25 });
    expect((await patch("10.00")).status).toBe(409);
    expect(kit.emu.ledger().find((x) => x.id === pid)?.amount).toBe(7525);
    expect(DK_USER).toBe("+4520031801");
  });
});
