/**
 * Member steps of the fleet plans scenario (plans.test.ts): sign-up on the public page and the unit's
 * entitlement route, callbacks without the fleet's key or replayed, suspension after a failed payment's grace
 * and resumption, and no badge UID in the database file or the logs. Registered in order by plans.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Fastify from "fastify";
import { request } from "undici";
import { expect, it } from "vitest";
import { DK_USER, FAILING_USER } from "../../emulator/subscriptions/testkit.test-support.js";
import { badgeHash, verifyEntitlements } from "../../update/entitlements.js";
import { openFleetDb } from "../database.js";
import { registerEntitlementRoute, signUp } from "./index.js";
import { API_KEY, HOUR, type PlansFixture, SALT, UID, UID_HEX, until } from "./plans.test-support.js";

export function signUpTest(f: PlansFixture): void {
  it("signs a member up on the public page (CSRF, QR of the landing link); accepted → entitled", async () => {
    const { ctx, fleet, emu, clock, pk, planId, member, sim, latestList } = f;
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
    f.memberId = m.id;
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
      (await member(f.memberId)).status === "active" ? true : undefined,
    );
    const list = await latestList();
    expect(list.members.map((x) => x.memberId)).toEqual([f.memberId]);
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
    f.acceptedBody = JSON.stringify(cbs.delivered.find((d) => d.url.endsWith("/success"))?.body);
    expect(f.acceptedBody).toContain("Accepted");
  });
}

export function callbackAuthTest(f: PlansFixture): void {
  it("refuses callbacks without the fleet's key and ignores replays", async () => {
    const { fleet, member, sim, latestList } = f;
    const { memberId } = f;
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
      payload: f.acceptedBody,
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ status: "seen" });
    expect((await member(memberId)).status).toBe("ended");
    expect((await latestList()).members).toEqual([]);
  });
}

export function suspensionTest(f: PlansFixture): void {
  it("suspends after a failed payment's grace period and resumes when paid", async () => {
    const { ctx, client, s, planId, advance, member, cycle, sim, latestList } = f;
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
}

export function noBadgeUidTest(f: PlansFixture): void {
  it("never stores nor logs a badge UID", async () => {
    const { dir } = f;
    await f.fdb.close();
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
    const text = f.logs.join("");
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(UID_HEX);
    expect(text).not.toContain(UID);
    expect(text).not.toContain("A1B2C3D4");
    expect(text).not.toContain(API_KEY);
    f.fdb = await openFleetDb(join(f.dir, "fleet.db"));
  });
}
