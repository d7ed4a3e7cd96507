/**
 * Plans against the emulator's subscriptions interface (seed 000), end to end over real HTTPS callbacks:
 * the fleet (Fastify with a self-signed certificate the emulator trusts) signs a member up, follows the
 * agreement, charges the month, bills and captures overage, refunds, suspends after a failed payment's grace
 * and resumes when paid; callbacks without the fleet's key, or replayed, change nothing; badge UIDs never
 * reach the database file or the logs. Clocks: the fleet's ManualClock and the emulator's clock move
 * together; only the HTTP round trips are waited for. Needs `openssl` (test certificates).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until as waitUntil } from "../../../test/support/wait.js";
import { ManualClock } from "../../core/clock.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import { DK_USER, FAILING_USER, START } from "../../emulator/subscriptions/testkit.js";
import { hasOpenssl, selfSignedCertificate } from "../../emulator/testing/httpsReceiver.js";
import { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import { badgeHash, verifyEntitlements } from "../../update/entitlements.js";
import { decryptSecretKey, generateKeys, KDF_INTERACTIVE, parsePublicKey } from "../../update/minisign.js";
import type { FleetContext } from "../context.js";
import { type FleetDb, openFleetDb } from "../db/open.js";
import {
  configureProvider,
  createPlan,
  type PlansSettings,
  plansPublisher,
  registerEntitlementRoute,
  registerPlanAdmin,
  registerPlans,
  requestRefund,
  runPlanCycle,
  signUp,
} from "./index.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: fleet plans tests skipped");

const UID = "04:A2:3B:4C:5D:6E:7F";
const UID_HEX = "04A23B4C5D6E7F";
const SALT = "c2FsdHNhbHRzYWx0c2FsdA";
const API_KEY = "fleet-callback-key.0123456789abcdef";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Bounded real-time wait for network I/O (callbacks reaching the fleet). */
const until = <T>(what: string, check: () => Promise<T | undefined>, ms?: number): Promise<T> =>
  waitUntil(what, check, ms ?? 8000);

describe.skipIf(skip)("fleet plans against the emulator (seed 000)", () => {
  let dir: string;
  let emu: Emulator;
  let fleet: FastifyInstance;
  let fdb: FleetDb;
  let ctx: FleetContext;
  let client: SubscriptionsClient;
  let s: PlansSettings;
  let pk: ReturnType<typeof parsePublicKey>;
  let planId: string;
  const clock = new ManualClock(START);
  const logs: string[] = [];

  /** Moves both clocks; the emulator runs its due work (executions, batches, retries) on the way. */
  function advance(ms: number): void {
    clock.advance(ms);
    emu.clock.advance(ms);
  }

  const member = (id: string) =>
    ctx.db.selectFrom("members").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const cycle = () => runPlanCycle(ctx, client, clock.now(), s, plansPublisher(ctx, s));
  const sim = (path: string, body: unknown) =>
    request(`${emu.info.subscriptions.baseUrl}/app/subscriptions/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> }));
  async function latestList() {
    const l = await ctx.db
      .selectFrom("plan_entitlements")
      .selectAll()
      .orderBy("serial", "desc")
      .limit(1)
      .executeTakeFirstOrThrow();
    return verifyEntitlements(l.document, l.signature, pk, clock.now());
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-plans-"));
    const cert = selfSignedCertificate();
    emu = await startEmulator({
      startTime: START,
      timeSource: () => 0,
      subscriptions: { callbackCa: cert.cert, callbackAllowLoopbackPorts: true },
    });
    fdb = await openFleetDb(join(dir, "fleet.db"));
    const logger = pino({ level: "debug" }, { write: (l: string) => void logs.push(l) });
    ctx = { db: fdb.db, dialect: fdb.dialect, clock, logger, timeZone: "UTC" };
    const info = emu.info.subscriptions;
    client = new SubscriptionsClient({
      baseUrl: info.baseUrl,
      tokenUrl: info.tokenUrl,
      clientId: info.clientId,
      clientSecret: info.clientSecret,
      providerId: info.providerId,
      clock,
      random: () => 0.5,
    });
    const keys = await generateKeys("plans test", KDF_INTERACTIVE);
    pk = parsePublicKey(keys.publicKeyText);
    fleet = Fastify({ https: { key: cert.key, cert: cert.cert } });
    s = {
      publicUrl: "",
      userRedirectUrl: "https://fleet.example/plans/thanks",
      callbackApiKey: API_KEY,
      csrfSecret: Buffer.from("csrf secret of the test fleet 0123456789"),
      badgeSalt: SALT,
      entitlementKey: await decryptSecretKey(keys.secretKeyText, "plans test"),
      countryCode: "DK",
      graceMs: DAY,
      serviceGraceDays: 1,
      autoReserve: true,
    };
    await registerPlans(fleet, ctx, { client, settings: s });
    await registerPlanAdmin(
      fleet,
      ctx,
      { client, settings: s },
      async (req, reply) => {
        if (req.headers["x-test-manager"] !== "yes") await reply.code(403).send("no");
      },
      () => "manager-1",
    );
    await fleet.listen({ port: 0, host: "127.0.0.1" });
    s.publicUrl = `https://127.0.0.1:${(fleet.server.address() as AddressInfo).port}`;
    await configureProvider(client, s);
    planId = await createPlan(ctx, {
      name: "Coffee 20",
      price: 9900,
      currency: "DKK",
      dayItems: 2,
      dayAmount: null,
      monthItems: 20,
      monthAmount: null,
      units: ["*"],
    });
  });

  afterAll(async () => {
    await fleet?.close();
    await emu?.close();
    await fdb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let memberId = "";
  let acceptedBody = "";

  it("signs a member up on the public page (CSRF, QR of the landing link); accepted → entitled", async () => {
    const page = await fleet.inject({ method: "GET", url: `/plans/signup/${planId}` });
    expect(page.statusCode).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
    expect(csrf).not.toBe("");
    const form = (token: string) =>
      new URLSearchParams({ csrf: token, name: "Ada <Lovelace>", phone: DK_USER, badge: UID }).toString();
    const forged = await fleet.inject({
      method: "POST",
      url: `/plans/signup/${planId}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: form(`${csrf.split(".")[0]}.x.y`),
    });
    expect(forged.statusCode).toBe(403);
    expect(await ctx.db.selectFrom("members").select("id").execute()).toEqual([]);
    const done = await fleet.inject({
      method: "POST",
      url: `/plans/signup/${planId}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: form(csrf),
    });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain("<svg");
    expect(done.body).toContain("/subscriptions/landing?flow=agreement");
    const m = await ctx.db.selectFrom("members").selectAll().executeTakeFirstOrThrow();
    memberId = m.id;
    expect(m.status).toBe("pending");
    expect(m.badge_hash).toBe(badgeHash(UID_HEX, SALT));
    expect(m.name).toBe("Ada <Lovelace>");
    // the same card cannot sign up twice
    const again = await fleet.inject({
      method: "POST",
      url: `/plans/signup/${planId}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: form(csrf),
    });
    expect(again.statusCode).toBe(409);

    const accepted = await sim(`agreements/${m.agreement_id}/accept`, { phoneNumber: DK_USER });
    expect(accepted.status).toBe(200);
    await until("member active", async () =>
      (await member(memberId)).status === "active" ? true : undefined,
    );
    const list = await latestList();
    expect(list.members.map((x) => x.memberId)).toEqual([memberId]);
    expect(list.members[0]?.badge).toBe(badgeHash(UID_HEX, SALT));
    expect(list.members[0]?.perDay).toEqual({ items: 2, amount: null });

    // the unit route: served behind the (given) unit auth, conditional GET
    const app = Fastify();
    registerEntitlementRoute(app, ctx, async (req, reply) => {
      if (req.headers["x-test-unit"] !== "u1") await reply.code(401).send({ error: "unauthorized" });
    });
    const denied = await app.inject({ method: "GET", url: "/api/unit/v1/entitlements" });
    expect(denied.statusCode).toBe(401);
    const got = await app.inject({
      method: "GET",
      url: "/api/unit/v1/entitlements",
      headers: { "x-test-unit": "u1" },
    });
    expect(got.statusCode).toBe(200);
    const body = got.json() as { document: string; signature: string };
    expect(verifyEntitlements(body.document, body.signature, pk, clock.now()).serial).toBe(list.serial);
    const etag = String(got.headers.etag);
    const same = await app.inject({
      method: "GET",
      url: "/api/unit/v1/entitlements",
      headers: { "x-test-unit": "u1", "if-none-match": etag },
    });
    expect(same.statusCode).toBe(304);
    await app.close();

    const cbs = await request(`${emu.info.subscriptions.baseUrl}/_admin/subscriptions/callbacks`).then(
      (r) => r.body.json() as Promise<{ delivered: { url: string; body: unknown }[] }>,
    );
    acceptedBody = JSON.stringify(cbs.delivered.find((d) => d.url.endsWith("/success"))?.body);
    expect(acceptedBody).toContain("Accepted");
  });

  it("charges the month's fee ahead of its due date; executed on the due date", async () => {
    const r = await cycle();
    expect(r.chargesRequested).toBe(1);
    const c = await ctx.db.selectFrom("plan_charges").selectAll().executeTakeFirstOrThrow();
    expect(c).toMatchObject({ period: "2026-03", due_date: "2026-03-03", amount: 9900, state: "pending" });
    expect((await cycle()).chargesRequested).toBe(0); // idempotent
    advance(DAY - 6 * HOUR); // 2026-03-03 04:00: executed at 03:15, batched within 2 minutes
    await until("charge executed", async () => {
      const x = await ctx.db
        .selectFrom("plan_charges")
        .select("state")
        .where("id", "=", c.id)
        .executeTakeFirstOrThrow();
      return x.state === "executed" ? true : undefined;
    });
    expect(
      (await client.getCharge(String((await member(memberId)).agreement_id), String(c.payment_id))).status,
    ).toBe("Executed");
  });

  it("bills usage above the allowance at the period's end as an auto-reserved one-off, captured once", async () => {
    // three plan vends on 2026-03-10 (2 a day allowed) and one on the 11th: one over, 25.00
    const sale = (n: number, day: string, at: number) => ({
      unit_id: "u1",
      seq: n,
      session_id: `s${n}`,
      order_id: `o${n}`,
      payment_id: null,
      driver: "plan" as const,
      flow: "selection" as const,
      item: 1,
      price: 2500,
      result: "captured" as const,
      approved: 2500,
      captured: 2500,
      refunded: 0,
      currency: "DKK",
      vends_ok: 1,
      vends_failed: 0,
      opened_at: at,
      closed_at: at,
      day,
      member_id: memberId,
      plan_id: planId,
    });
    const t = Date.parse("2026-03-10T08:00:00Z");
    await ctx.db
      .insertInto("units")
      .values({
        id: "u1",
        public_key: "pk-u1",
        fingerprint: "fp",
        label: "Office 1",
        status: "approved",
        enrolled_at: START,
        decided_by: "manager",
        decided_at: START,
      })
      .execute();
    await ctx.db
      .insertInto("sales")
      .values([
        sale(1, "2026-03-10", t),
        sale(2, "2026-03-10", t + HOUR),
        sale(3, "2026-03-10", t + 2 * HOUR),
        sale(4, "2026-03-11", t + DAY),
      ])
      .execute();
    advance(Date.parse("2026-04-01T06:00:00Z") - clock.now());
    const r = await cycle();
    expect(r.overagesBilled).toBe(1);
    const o = await until("overage captured", async () => {
      const x = await ctx.db
        .selectFrom("plan_overages")
        .selectAll()
        .where("member_id", "=", memberId)
        .executeTakeFirst();
      return x?.state === "captured" ? x : undefined;
    });
    expect(o).toMatchObject({ period: "2026-03", items: 1, amount: 2500 });
    expect(
      await client.getOneOff(String((await member(memberId)).agreement_id), String(o.oneoff_id)),
    ).toMatchObject({
      status: "Captured",
    });
    const again = await cycle();
    expect(again.overagesBilled).toBe(0);
    // April's fee was requested too (due today or ahead)
    const april = await ctx.db
      .selectFrom("plan_charges")
      .selectAll()
      .where("period", "=", "2026-04")
      .execute();
    expect(april).toHaveLength(1);

    // refunds: part of the overage, then more than what is left is refused here
    const refund = await requestRefund(ctx, client, s, {
      memberId,
      paymentId: String(o.oneoff_id),
      amount: 1000,
      by: "manager",
    });
    await until("refund issued", async () => {
      const x = await ctx.db
        .selectFrom("plan_refunds")
        .selectAll()
        .where("id", "=", refund)
        .executeTakeFirstOrThrow();
      return x.state === "issued" ? x : undefined;
    });
    await expect(
      requestRefund(ctx, client, s, {
        memberId,
        paymentId: String(o.oneoff_id),
        amount: 1600,
        by: "manager",
      }),
    ).rejects.toThrow(/left to refund/);
  });

  it("refunds a month's fee in full from the dashboard's form (behind the dashboard's guard)", async () => {
    const march = await ctx.db
      .selectFrom("plan_charges")
      .selectAll()
      .where("member_id", "=", memberId)
      .where("period", "=", "2026-03")
      .executeTakeFirstOrThrow();
    const post = (headers: Record<string, string>) =>
      fleet.inject({
        method: "POST",
        url: `/plans/admin/members/${memberId}/refunds`,
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        payload: new URLSearchParams({ payment: String(march.payment_id), amount: "" }).toString(),
      });
    expect((await post({})).statusCode).toBe(403);
    const r = await post({ "x-test-manager": "yes" });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe(`/plans/members/${memberId}`);
    const refund = await until("full refund issued", async () => {
      const x = await ctx.db
        .selectFrom("plan_refunds")
        .selectAll()
        .where("payment_id", "=", String(march.payment_id))
        .executeTakeFirst();
      return x?.state === "issued" ? x : undefined;
    });
    expect(refund).toMatchObject({ amount: 9900, requested_by: "manager-1" });
    expect((await post({ "x-test-manager": "yes" })).statusCode).toBe(409);
  });

  it("refuses callbacks without the fleet's key and ignores replays", async () => {
    const before = await member(memberId);
    const url = `/plans/callbacks/agreements/${memberId}/cancel`;
    const canceled = JSON.stringify({
      agreement_id: before.agreement_id,
      external_id: memberId,
      status: "Canceled",
      status_text: "x",
      status_code: 40002,
      timestamp: "2026-04-01T06:00:00Z",
    });
    for (const authorization of [undefined, "wrong", `Bearer ${API_KEY}`]) {
      const r = await fleet.inject({
        method: "POST",
        url,
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        payload: canceled,
      });
      expect(r.statusCode).toBe(401);
    }
    expect((await member(memberId)).status).toBe("active");
    // a real cancellation by the user, then the old Accepted callback replayed with the right key
    await sim(`agreements/${before.agreement_id}/cancel`, {});
    await until("member ended", async () => ((await member(memberId)).status === "ended" ? true : undefined));
    const replay = await fleet.inject({
      method: "POST",
      url: `/plans/callbacks/agreements/${memberId}/success`,
      headers: { "content-type": "application/json", authorization: API_KEY },
      payload: acceptedBody,
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ status: "seen" });
    expect((await member(memberId)).status).toBe("ended");
    expect((await latestList()).members).toEqual([]);
  });

  it("suspends after a failed payment's grace period and resumes when paid", async () => {
    const { memberId: id } = await signUp(ctx, client, s, {
      planId,
      name: "Bob",
      phone: FAILING_USER,
      badgeUid: "A1B2C3D4",
    });
    const m = await member(id);
    await sim(`agreements/${m.agreement_id}/accept`, { phoneNumber: FAILING_USER });
    await until("member active", async () => ((await member(id)).status === "active" ? true : undefined));
    expect((await cycle()).chargesRequested).toBeGreaterThanOrEqual(1);
    // due tomorrow, one grace day at the service: Failed after 23:59 of the grace day
    const failed = await until(
      "charge failed",
      async () => {
        advance(6 * HOUR);
        await cycle();
        const x = await member(id);
        return x.grace_until !== null ? x : undefined;
      },
      15_000,
    );
    expect((await member(id)).status).toBe("active");
    const suspended = await until(
      "member suspended",
      async () => {
        advance(6 * HOUR);
        await cycle();
        const x = await member(id);
        return x.status === "suspended" ? x : undefined;
      },
      15_000,
    );
    expect(suspended.reason).toBe("payment failed");
    expect(suspended.updated_at).toBeGreaterThanOrEqual(failed.grace_until ?? Number.POSITIVE_INFINITY);
    expect((await latestList()).members.map((x) => x.memberId)).not.toContain(id);
    // the card works again: the next attempt goes through and the member is back
    await sim("user", { phoneNumber: FAILING_USER, cardFails: false });
    await until(
      "member resumed",
      async () => {
        advance(6 * HOUR);
        await cycle();
        return (await member(id)).status === "active" ? true : undefined;
      },
      15_000,
    );
    expect((await latestList()).members.map((x) => x.memberId)).toContain(id);
  });

  it("without auto-reserve, the member accepts the overage in the app; then it is captured", async () => {
    s.autoReserve = false;
    try {
      const { memberId: id } = await signUp(ctx, client, s, {
        planId,
        name: "Cy",
        phone: DK_USER,
        badgeUid: "0A0B0C0D0E0F",
      });
      await sim(`agreements/${(await member(id)).agreement_id}/accept`, { phoneNumber: DK_USER });
      await until("member active", async () => ((await member(id)).status === "active" ? true : undefined));
      const period = new Date(clock.now()).toISOString().slice(0, 7);
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      await ctx.db
        .insertInto("sales")
        .values(
          [101, 102, 103].map((n) => ({
            unit_id: "u1",
            seq: n,
            session_id: `s${n}`,
            order_id: `o${n}`,
            payment_id: null,
            driver: "plan" as const,
            flow: "selection" as const,
            item: 2,
            price: 1800,
            result: "captured" as const,
            approved: 1800,
            captured: 1800,
            refunded: 0,
            currency: "DKK",
            vends_ok: 1,
            vends_failed: 0,
            opened_at: clock.now() + n,
            closed_at: clock.now() + n,
            day,
            member_id: id,
            plan_id: planId,
          })),
        )
        .execute();
      const [y, mo] = period.split("-").map(Number) as [number, number];
      advance(Date.UTC(y, mo, 1, 6) - clock.now()); // 06:00 on the 1st of the next month
      await cycle();
      const o = await ctx.db
        .selectFrom("plan_overages")
        .selectAll()
        .where("member_id", "=", id)
        .executeTakeFirstOrThrow();
      expect(o).toMatchObject({ period, items: 1, amount: 1800, state: "requested" });
      expect(o.landing_url).toContain("flow=oneoff");
      expect((await sim(`oneoffpayments/${o.oneoff_id}/accept`, {})).status).toBe(200);
      await until("overage captured", async () => {
        const x = await ctx.db
          .selectFrom("plan_overages")
          .select("state")
          .where("id", "=", o.id)
          .executeTakeFirstOrThrow();
        return x.state === "captured" ? true : undefined;
      });
    } finally {
      s.autoReserve = true;
    }
  });

  it("never stores nor logs a badge UID", async () => {
    await fdb.close();
    const bytes = ["fleet.db", "fleet.db-wal"].map((f) => {
      try {
        return readFileSync(join(dir, f)).toString("latin1");
      } catch {
        return "";
      }
    });
    for (const b of bytes) {
      expect(b).not.toContain(UID_HEX);
      expect(b).not.toContain(UID);
      expect(b).not.toContain("A1B2C3D4");
      expect(b).not.toContain("0A0B0C0D0E0F");
    }
    const text = logs.join("");
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(UID_HEX);
    expect(text).not.toContain(UID);
    expect(text).not.toContain("A1B2C3D4");
    expect(text).not.toContain(API_KEY);
    fdb = await openFleetDb(join(dir, "fleet.db"));
  });
});
