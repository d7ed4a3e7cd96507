/**
 * The composed fleet server (src/fleet/features.ts): every added page answers inside the dashboard's layout,
 * login, CSRF and roles (a viewer cannot post); manager forms (invoice cancel, plan creation, bundle upload)
 * work with the session's token; the public plan sign-up and both services' callbacks are mounted with their
 * own authentication; the unit API serves GET /entitlements behind unit auth and the heartbeat carries the
 * entitlement list's ETag.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultFleetConfig } from "../../src/fleet/config.js";
import { startFleetJobs } from "../../src/fleet/features.js";
import { invoicesDb } from "../../src/fleet/invoices/store/invoices.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { createBundle } from "../../src/update/bundle.js";
import { parsePublicKey } from "../../src/update/minisign.js";
import { makeKey, signWith } from "../../src/update/update.test-support.js";
import { send, simUnit } from "../support/fleet.js";
import {
  type ComposedFleet,
  HOST,
  type Login,
  loginAs,
  ORIGIN,
  startComposedFleet,
} from "../support/fleetCompose.js";
import { MANAGER, NOW, VIEWER, XSS, XSS_ESCAPED } from "../support/fleetDashboard.js";

function form(app: FastifyInstance, url: string, login: Login, fields: Record<string, string>) {
  return app.inject({
    method: "POST",
    url,
    headers: {
      host: HOST,
      origin: ORIGIN,
      cookie: login.cookie,
      "content-type": "application/x-www-form-urlencoded",
    },
    payload: new URLSearchParams(fields).toString(),
  });
}

describe("composed fleet server", () => {
  let f: ComposedFleet;
  let manager: Login;
  let viewer: Login;
  let pages: string[];

  beforeAll(async () => {
    f = await startComposedFleet();
    manager = await loginAs(f.app, MANAGER);
    viewer = await loginAs(f.app, VIEWER);
    pages = [
      "/reconcile",
      `/reconcile/${f.runId}`,
      `/reconcile/${f.runId}/lines`,
      `/reconcile/${f.runId}/lines?day=2026-11-24&all=1`,
      "/plans",
      "/plans/members",
      `/plans/members/${f.memberId}`,
      "/plans/usage",
      "/plans/usage?period=2026-10",
      "/companies",
      "/invoices",
      "/invoices?status=sent",
      `/invoices/${f.invoiceId}`,
      "/bundles/upload",
    ];
  });
  afterAll(async () => {
    await f.close();
  });

  it("every added page answers in the dashboard layout with its nav entries; seeded text is escaped", async () => {
    for (const url of pages) {
      const r = await f.app.inject({ url, headers: { host: HOST, cookie: viewer.cookie } });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers["content-security-policy"], url).toContain("default-src 'self'");
      for (const href of [
        "/reconcile",
        "/plans",
        "/plans/members",
        "/plans/usage",
        "/companies",
        "/invoices",
      ])
        expect(r.body, url).toContain(`href="${href}"`);
      expect(r.body, url).not.toContain(XSS);
      expect(r.body.match(/<h1>/g)?.length, url).toBe(1);
    }
    const lines = await f.app.inject({
      url: `/reconcile/${f.runId}/lines`,
      headers: { host: HOST, cookie: viewer.cookie },
    });
    expect(lines.body).toContain(`not in the report ${XSS_ESCAPED}`);
    const companies = await f.app.inject({
      url: "/companies",
      headers: { host: HOST, cookie: viewer.cookie },
    });
    expect(companies.body).toContain(`Acme ${XSS_ESCAPED}`);
    const member = await f.app.inject({
      url: `/plans/members/${f.memberId}`,
      headers: { host: HOST, cookie: viewer.cookie },
    });
    expect(member.body).toContain("Ada Lovelace");
    const missing = await f.app.inject({
      url: "/reconcile/999",
      headers: { host: HOST, cookie: viewer.cookie },
    });
    expect(missing.statusCode).toBe(404);
    const bad = await f.app.inject({
      url: "/plans/usage?period=2026-13",
      headers: { host: HOST, cookie: viewer.cookie },
    });
    expect(bad.statusCode).toBe(400);
  });

  it("without a session the pages redirect to the login and the forms are refused", async () => {
    for (const url of pages) {
      const r = await f.app.inject({ url, headers: { host: HOST } });
      expect(r.statusCode, url).toBe(303);
      expect(r.headers.location).toBe("/login");
    }
    const r = await f.app.inject({
      method: "POST",
      url: `/invoices/${f.invoiceId}/cancel`,
      headers: { host: HOST, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      payload: "",
    });
    expect(r.statusCode).toBe(403);
  });

  it("a viewer cannot post: invoice cancel, plan creation, member end, bundle upload", async () => {
    const page = await f.app.inject({
      url: `/invoices/${f.invoiceId}`,
      headers: { host: HOST, cookie: viewer.cookie },
    });
    expect(page.body).not.toContain("Cancel invoice");
    for (const url of [
      `/invoices/${f.invoiceId}/cancel`,
      "/plans/admin/plans",
      `/plans/admin/members/${f.memberId}/end`,
      "/bundles/upload",
    ]) {
      const r = await form(f.app, url, viewer, { _csrf: viewer.csrf, name: "x" });
      expect(r.statusCode, url).toBe(403);
    }
    expect(f.cancelled).toEqual([]);
    expect((await f.ctx.db.selectFrom("plans").select("id").execute()).length).toBe(1);
  });

  it("a manager's post needs the session's CSRF token and this site's origin", async () => {
    const noToken = await form(f.app, `/invoices/${f.invoiceId}/cancel`, manager, {});
    expect(noToken.statusCode).toBe(403);
    const otherToken = await form(f.app, `/invoices/${f.invoiceId}/cancel`, manager, { _csrf: viewer.csrf });
    expect(otherToken.statusCode).toBe(403);
    const crossSite = await f.app.inject({
      method: "POST",
      url: `/invoices/${f.invoiceId}/cancel`,
      headers: {
        host: HOST,
        origin: "http://evil.example",
        cookie: manager.cookie,
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: new URLSearchParams({ _csrf: manager.csrf }).toString(),
    });
    expect(crossSite.statusCode).toBe(403);
    expect(f.cancelled).toEqual([]);
  });

  it("a manager cancels a sent invoice (the service is told, the invoice becomes cancelled, once)", async () => {
    const page = await f.app.inject({
      url: `/invoices/${f.invoiceId}`,
      headers: { host: HOST, cookie: manager.cookie },
    });
    expect(page.body).toContain("Cancel invoice");
    const r = await form(f.app, `/invoices/${f.invoiceId}/cancel`, manager, { _csrf: manager.csrf });
    expect(r.statusCode, r.body).toBe(303);
    expect(f.cancelled).toEqual(["remote-1"]);
    const row = await invoicesDb(f.ctx)
      .selectFrom("invoices")
      .select("status")
      .where("id", "=", f.invoiceId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("cancelled");
    const again = await form(f.app, `/invoices/${f.invoiceId}/cancel`, manager, { _csrf: manager.csrf });
    expect(again.statusCode).toBe(409);
    expect(f.cancelled).toEqual(["remote-1"]);
  });

  it("a manager creates a plan with the plans module's form (field `csrf`)", async () => {
    const r = await form(f.app, "/plans/admin/plans", manager, {
      csrf: manager.csrf,
      name: "Tea",
      price: "45.00",
      currency: "DKK",
      dayItems: "2",
      dayAmount: "",
      monthItems: "",
      monthAmount: "",
      units: "*",
    });
    expect(r.statusCode, r.body).toBe(303);
    const list = await f.app.inject({ url: "/plans", headers: { host: HOST, cookie: viewer.cookie } });
    expect(list.body).toContain("Tea");
  });

  it("bundle upload: multipart form for managers; a non-bundle is refused with the reason", async () => {
    const seeded = (await f.ctx.db.selectFrom("bundles").select("id").execute()).length;
    const boundary = "----vendd0123";
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="_csrf"\r\n\r\n${manager.csrf}\r\n`),
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="bundle"; filename="b.tar"\r\ncontent-type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.from([0, 1, 2, 3, 13, 10, 45, 45]),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    /** POSTs `payload` to the upload form, with the session cookie when given. */
    const upload = (
      payload: Buffer,
      cookie: string | undefined,
      type = `multipart/form-data; boundary=${boundary}`,
    ) =>
      f.app.inject({
        method: "POST",
        url: "/bundles/upload",
        headers: {
          host: HOST,
          origin: ORIGIN,
          ...(cookie === undefined ? {} : { cookie }),
          "content-type": type,
        },
        payload,
      });
    // A body that is not multipart at all is a 4xx, and stores nothing.
    const junk = await upload(Buffer.from("junk"), manager.cookie, "multipart/form-data; boundary=x");
    expect(junk.statusCode).toBeGreaterThanOrEqual(400);
    expect(junk.statusCode).toBeLessThan(500);
    const r = await upload(body, manager.cookie);
    expect(r.statusCode, r.body).toBe(422);
    // Without a manager's session the body is refused before it is read.
    for (const cookie of [undefined, viewer.cookie]) {
      const refused = await upload(body, cookie);
      expect(refused.statusCode).toBe(403);
    }
    expect(r.body).toContain("Refused (truncated)");
    expect((await f.ctx.db.selectFrom("bundles").select("id").execute()).length).toBe(seeded);

    // A bundle signed by a configured bundle key is stored, uploaded by the manager.
    const signer = await makeKey("compose-test");
    f.ctx.bundleKeys = [parsePublicKey(signer.publicKeyText)];
    const { bundle, manifest } = createBundle({
      configText: "unit: {id: vm-0001}\n",
      release: null,
      version: 3,
      targets: ["vm-0001"],
      expires: "2031-01-01",
    });
    const good = Buffer.concat([
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="_csrf"\r\n\r\n${manager.csrf}\r\n`),
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="bundle"; filename="b.tar"\r\n\r\n`),
      signWith(bundle, [signer]),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const ok = await upload(good, manager.cookie);
    expect(ok.statusCode, ok.body).toBe(303);
    expect(ok.headers.location).toBe("/bundles");
    const row = await f.ctx.db
      .selectFrom("bundles")
      .select(["id", "uploaded_by"])
      .where("id", "=", manifest.id)
      .executeTakeFirst();
    expect(row).toEqual({ id: manifest.id, uploaded_by: MANAGER.username });
    const listing = await f.app.inject({ url: "/bundles", headers: { host: HOST, cookie: manager.cookie } });
    expect(listing.body).toContain('href="/bundles/upload"');
    const asViewer = await f.app.inject({ url: "/bundles", headers: { host: HOST, cookie: viewer.cookie } });
    expect(asViewer.body).not.toContain('href="/bundles/upload"');
  });

  /** POSTs an empty JSON batch to a service's callback route with the given Authorization header. */
  const postEmptyCallback = (url: string, authorization: string) =>
    f.app.inject({
      method: "POST",
      url,
      headers: { host: HOST, authorization, "content-type": "application/json" },
      payload: "[]",
    });

  it("public sign-up and the services' callbacks are mounted with their own authentication", async () => {
    const signUp = await f.app.inject({ url: `/plans/signup/${f.planId}`, headers: { host: HOST } });
    expect(signUp.statusCode).toBe(200);
    expect(signUp.body).toContain("Coffee club");
    const inv = await postEmptyCallback("/invoices/callbacks", "wrong");
    expect(inv.statusCode).toBe(401);
    const invOk = await postEmptyCallback("/invoices/callbacks", "invoice-callback-key-1");
    expect(invOk.statusCode).toBe(200);
    const plans = await postEmptyCallback("/plans/callbacks/payments", "wrong");
    expect(plans.statusCode).toBe(401);
  });

  it("jobs: the plan and invoice cycles are scheduled, run through their lock, and stop", async () => {
    const jobs = startFleetJobs(f.ctx, f.services, defaultFleetConfig().schedules);
    try {
      // No reporting configured: no nightly reconciliation.
      expect(jobs.started).toEqual(["planCycle", "invoiceCycle"]);
      expect(await jobs.run("planCycle")).toBe(true);
      // The invoice run is for the month before the clock's (2026-10): the seeded company has its invoice.
      expect(await jobs.run("invoiceCycle")).toBe(true);
      const invoices = await invoicesDb(f.ctx).selectFrom("invoices").select("month").execute();
      expect(invoices).toEqual([{ month: "2026-10" }]);
    } finally {
      await jobs.stop();
    }
    const none = startFleetJobs(f.ctx, {}, defaultFleetConfig().schedules);
    expect(none.started).toEqual([]);
    await none.stop();
  });

  it("units: GET /entitlements behind unit auth; the heartbeat answers the newest list's ETag", async () => {
    const unsigned = await f.app.inject({ url: "/api/unit/v1/entitlements" });
    expect(unsigned.statusCode).toBe(401);
    const u = simUnit("vm-compose-1");
    expect((await send(f.app, u.key, "POST", "/enroll", { unitId: u.id, label: "x" }, NOW)).status).toBe(202);
    expect((await send(f.app, u.key, "GET", "/entitlements", undefined, NOW)).status).toBe(403);
    expect(await approveUnit(f.ctx, u.id, "mia")).toBe("done");
    expect((await send(f.app, u.key, "GET", "/entitlements", undefined, NOW)).status).toBe(404);
    const hb = {
      unitId: u.id,
      at: NOW,
      state: "inService",
      reason: "",
      versions: { vendd: "0.9.0", config: "7", release: "1.4.0" },
      backlog: { events: 0, oldestAt: null, lastSeq: 0 },
      journal: { ok: true, detail: "" },
      vmc: "up",
      payment: "up",
      unresolved: 0,
    };
    const before = await send(f.app, u.key, "POST", "/heartbeat", hb, NOW);
    expect(before.status).toBe(200);
    expect(before.json).toMatchObject({ entitlementsEtag: null });
    await f.ctx.db
      .insertInto("plan_entitlements")
      .values({
        serial: 1,
        document: "{}",
        signature: "sig",
        content: "{}",
        etag: '"list-1"',
        issued_at: NOW,
        valid_until: NOW + 1,
      })
      .execute();
    const after = await send(f.app, u.key, "POST", "/heartbeat", hb, NOW + 1);
    expect(after.json).toMatchObject({ entitlementsEtag: '"list-1"' });
    const list = await send(f.app, u.key, "GET", "/entitlements", undefined, NOW + 2);
    expect(list.status).toBe(200);
    expect(list.headers.etag).toBe('"list-1"');
  });
});
