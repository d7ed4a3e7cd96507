/**
 * The fleet dashboard's security and data (issue 16): security headers, CSRF, roles, escaping of every
 * unit-controlled text on every page, CSV injection and the JSON API, all through Fastify's inject against a
 * seeded database. Logins and sessions: fleet-dashboard-login.test.ts.
 */
import { describe, expect, it } from "vitest";
import { CONTENT_SECURITY_POLICY, csvCell } from "../../src/fleet/web/index.js";
import {
  type Fleet,
  FORMULA_UNIT,
  IMG,
  MANAGER,
  seededRange,
  UNITS,
  XSS,
  XSS_ESCAPED,
} from "../support/fleetDashboard.js";
import { HOST, type Login, ORIGIN, post, sharedFleet, unitStatus } from "../support/fleetDashboardInject.js";

describe("fleet dashboard", () => {
  let fleet: Fleet;
  let manager: Login;
  let viewer: Login;
  sharedFleet((s) => {
    ({ fleet, manager, viewer } = s);
  });

  it("sends a strict CSP, X-Frame-Options DENY, nosniff and no referrer off the site on every page", async () => {
    for (const url of ["/login", "/", "/units", "/sales", "/bundles", "/api/v1/units"]) {
      const cookie = url === "/login" ? "" : viewer.cookie;
      const r = await fleet.app.inject({ url, headers: { host: HOST, cookie } });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
      expect(r.headers["x-frame-options"]).toBe("DENY");
      expect(r.headers["x-content-type-options"]).toBe("nosniff");
      expect(r.headers["referrer-policy"]).toBe("same-origin");
      expect(r.headers["cache-control"]).toBe("no-store");
    }
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain("unsafe-inline");
    // No inline script or style in any page: only external scripts and JSON data blocks.
    const page = await fleet.app.inject({ url: "/", headers: { cookie: viewer.cookie } });
    const scripts = page.body.match(/<script[^>]*>/g) ?? [];
    for (const s of scripts) expect(s).toMatch(/src="\/static\/|type="application\/json"/);
    expect(page.body).not.toMatch(/ style=|<style/);
  });

  it("refuses a form post without or with a wrong CSRF token, or from another origin, changing nothing", async () => {
    const target = `/units/${encodeURIComponent(UNITS.pending)}/approve`;
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ["no token", {}, { origin: ORIGIN }],
      ["wrong token", { _csrf: "x".repeat(43) }, { origin: ORIGIN }],
      ["viewer's token", { _csrf: viewer.csrf }, { origin: ORIGIN }],
      ["other origin", { _csrf: manager.csrf }, { origin: "http://evil.example" }],
      ["origin null", { _csrf: manager.csrf }, { origin: "null" }],
      ["no origin or referer", { _csrf: manager.csrf }, {}],
    ];
    for (const [name, form, headers] of cases) {
      const r = await post(fleet.app, target, manager, form, headers);
      expect(r.statusCode, name).toBe(403);
      expect(await unitStatus(fleet, UNITS.pending), name).toBe("pending");
    }
    // The logout form is protected too.
    const out = await post(fleet.app, "/logout", manager, {});
    expect(out.statusCode).toBe(403);
    // A same-origin Referer (no Origin) with the token is accepted.
    const ok = await post(
      fleet.app,
      target,
      manager,
      { _csrf: manager.csrf },
      { referer: `${ORIGIN}/units` },
    );
    expect(ok.statusCode).toBe(303);
    expect(await unitStatus(fleet, UNITS.pending)).toBe("approved");
    const row = await fleet.ctx.db
      .selectFrom("units")
      .select("decided_by")
      .where("id", "=", UNITS.pending)
      .executeTakeFirst();
    expect(row?.decided_by).toBe(MANAGER.username);
  });

  it("refuses a viewer's post with a valid token (403), and lets a manager revoke", async () => {
    const target = `/units/${encodeURIComponent(UNITS.sqli)}/revoke`;
    const r = await post(fleet.app, target, viewer, { _csrf: viewer.csrf });
    expect(r.statusCode).toBe(403);
    expect(await unitStatus(fleet, UNITS.sqli)).toBe("approved");
    const viewerPage = await fleet.app.inject({ url: "/units", headers: { cookie: viewer.cookie } });
    expect(viewerPage.body).not.toContain("/revoke");
    const m = await post(fleet.app, target, manager, { _csrf: manager.csrf });
    expect(m.statusCode).toBe(303);
    expect(await unitStatus(fleet, UNITS.sqli)).toBe("revoked");
    const again = await post(fleet.app, `/units/${encodeURIComponent(UNITS.sqli)}/approve`, manager, {
      _csrf: manager.csrf,
    });
    expect(again.statusCode).toBe(409);
    expect(await unitStatus(fleet, UNITS.sqli)).toBe("revoked");
    // Sales of the SQL-metacharacter unit are still there: the id was a parameter, never SQL.
    const n = await fleet.ctx.db
      .selectFrom("sales")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirst();
    expect(Number(n?.n)).toBe(20 * 6);
  });

  it("shows every unit-controlled text escaped on every page", async () => {
    const urls = [
      "/",
      "/units",
      ...Object.values(UNITS).map((id) => `/units/${encodeURIComponent(id)}`),
      `/sales?from=${seededRange().from}&to=${seededRange().to}`,
      `/sales?unit=${encodeURIComponent(UNITS.evil)}`,
      "/bundles",
    ];
    for (const url of urls) {
      const r = await fleet.app.inject({ url, headers: { cookie: viewer.cookie } });
      expect(r.statusCode, url).toBe(200);
      expect(r.body, url).not.toContain(XSS);
      expect(r.body, url).not.toContain(IMG);
      expect(r.body, url).not.toContain("<img");
      expect(r.body.match(/<script/g)?.length ?? 0, url).toBe(
        (r.body.match(/<script src="\/static\//g)?.length ?? 0) +
          (r.body.match(/<script type="application\/json"/g)?.length ?? 0),
      );
    }
    const units = await fleet.app.inject({ url: "/units", headers: { cookie: viewer.cookie } });
    expect(units.body).toContain(`Label ${XSS_ESCAPED}`);
    expect(units.body).toContain("x&#39;; DROP TABLE sales;--");
    expect(units.body).toContain("Pending &lt;img src=x onerror=alert(2)&gt;");
    const evil = await fleet.app.inject({
      url: `/units/${encodeURIComponent(UNITS.evil)}`,
      headers: { cookie: viewer.cookie },
    });
    expect(evil.body).toContain(`Unit u-${XSS_ESCAPED}`);
    expect(evil.body).toContain("jam &lt;script&gt;alert(1)&lt;/script&gt;"); // the fault, as text
    expect(evil.body).toContain("health gate failed &lt;img");
    const bundles = await fleet.app.inject({ url: "/bundles", headers: { cookie: viewer.cookie } });
    expect(bundles.body).toContain(`cfg-7${XSS_ESCAPED}`);
    expect(bundles.body).toContain("health gate failed &lt;img src=x onerror=alert(2)&gt;");
  });

  it("exports sales as an attachment CSV with formula cells neutralised", async () => {
    const { from, to } = seededRange();
    const r = await fleet.app.inject({
      url: `/sales.csv?from=${from}&to=${to}&group=unit`,
      headers: { cookie: viewer.cookie },
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/csv/);
    expect(r.headers["content-disposition"]).toBe(`attachment; filename="sales-unit-${from}-${to}.csv"`);
    const lines = r.body.trimEnd().split("\r\n");
    expect(lines[0]).toBe("unit,currency,sessions,sales,captured,refunded,net,vends_ok,vends_failed");
    expect(r.body).toContain(
      `"'=HYPERLINK(""http://evil.example"",""x"")",EUR,20,20,500.00,0.00,500.00,20,0`,
    );
    expect(r.body).not.toMatch(/^=/m);
    expect(r.body).toContain("u-lobby,DKK,60,60,1500.00,25.00,1475.00,60,0");
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("-1")).toBe("'-1");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvCell(-5)).toBe("-5");
    expect(FORMULA_UNIT.startsWith("=")).toBe(true);
    const bad = await fleet.app.inject({
      url: "/sales.csv?from=2026-13-01",
      headers: { cookie: viewer.cookie },
    });
    expect(bad.statusCode).toBe(400);
  });

  it("answers the JSON API with integer minor units and the overview's counts", async () => {
    const ov = await fleet.app.inject({ url: "/api/v1/overview", headers: { cookie: viewer.cookie } });
    const o = ov.json() as {
      units: { online: number; offline: number; pending: number };
      todayTotals: { currency: string; sales: number; net: number; vendsFailed: number }[];
      attention: { id: string; attention: string[] }[];
      chart: { days: string[]; series: { currency: string; net: number[] }[] };
    };
    // The evil unit is offline (and the pending one, approved above, never seen).
    expect(o.units.offline).toBe(2);
    expect(o.attention.map((u) => u.id)).toContain(UNITS.evil);
    const dkkToday = o.todayTotals.find((t) => t.currency === "DKK");
    expect(dkkToday?.vendsFailed).toBe(1);
    expect(Number.isInteger(dkkToday?.net)).toBe(true);
    expect(o.chart.days).toHaveLength(14);
    const { from, to } = seededRange();
    const sales = await fleet.app.inject({
      url: `/api/v1/sales?from=${from}&to=${to}&group=item&unit=${encodeURIComponent(UNITS.lobby)}`,
      headers: { cookie: viewer.cookie },
    });
    const s = sales.json() as {
      rows: { key: string; currency: string; captured: number; sessions: number }[];
    };
    expect(s.rows.reduce((n, r) => n + r.sessions, 0)).toBe(60);
    expect(s.rows.reduce((n, r) => n + r.captured, 0)).toBe(60 * 2500);
    const unit = await fleet.app.inject({
      url: `/api/v1/units/${encodeURIComponent(UNITS.evil)}`,
      headers: { cookie: viewer.cookie },
    });
    const u = unit.json() as { faults: unknown[]; chart: { days: string[] }; recentVends: unknown[] };
    expect(u.faults).toHaveLength(1);
    expect(u.chart.days).toHaveLength(30);
    expect(u.recentVends).toHaveLength(20);
    const b = await fleet.app.inject({ url: "/api/v1/bundles", headers: { cookie: viewer.cookie } });
    const bundles = (b.json() as { bundles: { counts: Record<string, number> }[] }).bundles;
    expect(bundles[0]?.counts).toEqual({ pending: 1, applied: 1, rolledBack: 1 });
    const missing = await fleet.app.inject({ url: "/api/v1/units/nope", headers: { cookie: viewer.cookie } });
    expect(missing.statusCode).toBe(404);
  });
});
