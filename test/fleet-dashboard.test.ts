/**
 * The fleet dashboard's security and data (issue 16): logins, sessions, throttling, CSRF, roles, escaping of
 * every unit-controlled text on every page, CSV injection, security headers and the JSON API, all through
 * Fastify's inject against a seeded database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import {
  MAX_FAILURES_PER_ACCOUNT,
  MAX_FAILURES_PER_ADDRESS,
  SESSION_IDLE_MS,
  tokenId,
  verifyPassword,
} from "../src/fleet/web/accounts.js";
import { CONTENT_SECURITY_POLICY, csvCell, SESSION_COOKIE } from "../src/fleet/web/index.js";
import {
  type Fleet,
  FORMULA_UNIT,
  IMG,
  MANAGER,
  NOW,
  seededRange,
  startFleet,
  UNITS,
  VIEWER,
  XSS,
  XSS_ESCAPED,
} from "./support/fleetDashboard.js";

const HOST = "fleet.test";
const ORIGIN = `http://${HOST}`;

interface Login {
  cookie: string;
  token: string;
  csrf: string;
}

function cookieOf(setCookie: string | string[] | undefined): string {
  const line = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  if (line === undefined) throw new Error("no set-cookie");
  return line;
}

async function loginAs(
  app: FastifyInstance,
  user: { username: string; password: string },
  remote = "10.0.0.1",
): Promise<Login> {
  const r = await app.inject({
    method: "POST",
    url: "/login",
    remoteAddress: remote,
    headers: { host: HOST, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams(user).toString(),
  });
  expect(r.statusCode, r.body).toBe(303);
  const line = cookieOf(r.headers["set-cookie"]);
  const token = /vendd_session=([^;]+)/.exec(line)?.[1] ?? "";
  const cookie = `${SESSION_COOKIE}=${token}`;
  const page = await app.inject({ method: "GET", url: "/units", headers: { host: HOST, cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  expect(csrf.length).toBeGreaterThan(20);
  return { cookie, token, csrf };
}

function post(
  app: FastifyInstance,
  url: string,
  login: Login | null,
  form: Record<string, string>,
  headers: Record<string, string> = { origin: ORIGIN },
) {
  return app.inject({
    method: "POST",
    url,
    headers: {
      host: HOST,
      ...(login === null ? {} : { cookie: login.cookie }),
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    },
    payload: new URLSearchParams(form).toString(),
  });
}

async function unitStatus(fleet: Fleet, id: string): Promise<string | undefined> {
  const row = await fleet.ctx.db.selectFrom("units").select("status").where("id", "=", id).executeTakeFirst();
  return row?.status;
}

describe("fleet dashboard", () => {
  let fleet: Fleet;
  let manager: Login;
  let viewer: Login;

  beforeAll(async () => {
    fleet = await startFleet();
    manager = await loginAs(fleet.app, MANAGER);
    viewer = await loginAs(fleet.app, VIEWER);
  });
  afterAll(async () => {
    await fleet.close();
  });

  it("serves /healthz without a session; pages redirect to the login, the API answers 401", async () => {
    const health = await fleet.app.inject({ url: "/healthz" });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: "ok" });
    for (const url of [
      "/",
      "/units",
      `/units/${encodeURIComponent(UNITS.lobby)}`,
      "/sales",
      "/bundles",
      "/sales.csv",
    ]) {
      const r = await fleet.app.inject({ url });
      expect(r.statusCode, url).toBe(303);
      expect(r.headers.location).toBe("/login");
    }
    for (const url of ["/api/v1/overview", "/api/v1/units", "/api/v1/sales", "/api/v1/bundles"]) {
      const r = await fleet.app.inject({ url });
      expect(r.statusCode, url).toBe(401);
    }
    const bogus = await fleet.app.inject({
      url: "/",
      headers: { cookie: `${SESSION_COOKIE}=${"A".repeat(43)}` },
    });
    expect(bogus.statusCode).toBe(303);
  });

  it("sets the session cookie HttpOnly, SameSite=Strict, Path=/; stores only the token's SHA-256", async () => {
    const r = await post(fleet.app, "/login", null, MANAGER);
    const line = cookieOf(r.headers["set-cookie"]);
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Strict/);
    expect(line).toMatch(/Path=\//);
    expect(line).not.toMatch(/Secure/);
    expect(line).not.toMatch(/Max-Age|Expires/); // a browser-session cookie; the server expires it when idle
    const token = /vendd_session=([^;]+)/.exec(line)?.[1] ?? "";
    expect(Buffer.from(token, "base64url").length).toBe(32);
    const rows = await fleet.ctx.db.selectFrom("web_sessions").select("id").execute();
    expect(rows.map((x) => x.id)).toContain(tokenId(token));
    expect(rows.map((x) => x.id)).not.toContain(token);
    // A new token at every login.
    const again = await post(fleet.app, "/login", null, MANAGER);
    expect(/vendd_session=([^;]+)/.exec(cookieOf(again.headers["set-cookie"]))?.[1]).not.toBe(token);
    const users = await fleet.ctx.db.selectFrom("users").select(["username", "password_hash"]).execute();
    for (const u of users) {
      expect(u.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
      expect(u.password_hash).not.toContain("password");
    }
    const mia = users.find((u) => u.username === MANAGER.username);
    expect(await verifyPassword(MANAGER.password, mia?.password_hash ?? "")).toBe(true);
    expect(await verifyPassword("wrong", mia?.password_hash ?? "")).toBe(false);
  });

  it("marks the cookie Secure when asked to (TLS)", async () => {
    const tls = await startFleet(":memory:", { secureCookies: true });
    try {
      const r = await post(tls.app, "/login", null, MANAGER);
      expect(cookieOf(r.headers["set-cookie"])).toMatch(/; Secure/);
      expect(r.headers["strict-transport-security"]).toBe("max-age=31536000");
    } finally {
      await tls.close();
    }
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

  it("refuses a wrong password and an unknown user alike, without a cookie", async () => {
    const wrong = await post(
      fleet.app,
      "/login",
      null,
      { username: MANAGER.username, password: "nope-nope-nope" },
      {
        origin: ORIGIN,
      },
    );
    const unknown = await post(fleet.app, "/login", null, { username: "nobody", password: "nope-nope-nope" });
    for (const r of [wrong, unknown]) {
      expect(r.statusCode).toBe(401);
      expect(r.headers["set-cookie"]).toBeUndefined();
      expect(r.body).toContain("Wrong user name or password.");
    }
  });

  it("throttles logins per account (5 in 15 min → 429 with Retry-After), across processes sharing the database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-dash-"));
    const clock = new ManualClock(NOW);
    const a = await startFleet(join(dir, "fleet.db"), { clock });
    const b = await startFleet(join(dir, "fleet.db"), { clock, seed: false });
    try {
      for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT; i++) {
        const r = await post(i % 2 === 0 ? a.app : b.app, "/login", null, {
          username: MANAGER.username,
          password: `wrong-${i}-password`,
        });
        expect(r.statusCode).toBe(401);
        clock.advance(1000);
      }
      // Throttled on the other process too, even with the right password.
      const blocked = await post(b.app, "/login", null, MANAGER);
      expect(blocked.statusCode).toBe(429);
      expect(blocked.headers["set-cookie"]).toBeUndefined();
      const retry = Number(blocked.headers["retry-after"]);
      expect(retry).toBeGreaterThan(800);
      expect(retry).toBeLessThanOrEqual(900);
      // Another account from another address is not affected.
      const other = await post(a.app, "/login", null, VIEWER);
      expect(other.statusCode).toBe(303);
      clock.advance(15 * 60_000);
      const later = await post(a.app, "/login", null, MANAGER);
      expect(later.statusCode).toBe(303);
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("throttles logins per remote address across accounts", async () => {
    const f = await startFleet();
    try {
      for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) {
        const r = await f.app.inject({
          method: "POST",
          url: "/login",
          remoteAddress: "192.0.2.7",
          headers: { host: HOST, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
          payload: new URLSearchParams({ username: `guess${i}`, password: "guess-guess-guess" }).toString(),
        });
        expect(r.statusCode).toBe(401);
      }
      const r = await f.app.inject({
        method: "POST",
        url: "/login",
        remoteAddress: "192.0.2.7",
        headers: { host: HOST, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams(VIEWER).toString(),
      });
      expect(r.statusCode).toBe(429);
      // The same account from another address logs in.
      await loginAs(f.app, VIEWER, "192.0.2.8");
    } finally {
      await f.close();
    }
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

  it("logs out: the session row is deleted, the cookie cleared, the old cookie useless", async () => {
    const s = await loginAs(fleet.app, VIEWER);
    const out = await post(fleet.app, "/logout", s, { _csrf: s.csrf });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe("/login");
    expect(cookieOf(out.headers["set-cookie"])).toMatch(/vendd_session=;/);
    const row = await fleet.ctx.db
      .selectFrom("web_sessions")
      .select("id")
      .where("id", "=", tokenId(s.token))
      .executeTakeFirst();
    expect(row).toBeUndefined();
    const after = await fleet.app.inject({ url: "/", headers: { cookie: s.cookie } });
    expect(after.statusCode).toBe(303);
  });

  it("expires an idle session", async () => {
    const f = await startFleet();
    try {
      const s = await loginAs(f.app, VIEWER);
      f.clock.advance(SESSION_IDLE_MS - 120_000);
      expect((await f.app.inject({ url: "/", headers: { cookie: s.cookie } })).statusCode).toBe(200);
      // Use pushed the expiry on: idle again for almost the whole period is still fine.
      f.clock.advance(SESSION_IDLE_MS - 120_000);
      expect((await f.app.inject({ url: "/", headers: { cookie: s.cookie } })).statusCode).toBe(200);
      f.clock.advance(SESSION_IDLE_MS + 1);
      const r = await f.app.inject({ url: "/", headers: { cookie: s.cookie } });
      expect(r.statusCode).toBe(303);
      const row = await f.ctx.db
        .selectFrom("web_sessions")
        .select("id")
        .where("id", "=", tokenId(s.token))
        .executeTakeFirst();
      expect(row).toBeUndefined();
    } finally {
      await f.close();
    }
  });
});
