/**
 * The fleet dashboard's logins and sessions (issue 16), through Fastify's inject against a seeded database:
 * what needs a session, the session cookie's flags and the stored token's hash, refused logins, throttling
 * per account (across processes sharing the database) and per address, logging out and idle expiry.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import {
  MAX_FAILURES_PER_ACCOUNT,
  MAX_FAILURES_PER_ADDRESS,
  SESSION_IDLE_MS,
  tokenId,
  verifyPassword,
} from "../../src/fleet/web/accounts.js";
import { SESSION_COOKIE } from "../../src/fleet/web/index.js";
import { type Fleet, MANAGER, NOW, startFleet, UNITS, VIEWER } from "../support/fleetDashboard.js";
import { cookieOf, HOST, loginAs, ORIGIN, post, sharedFleet } from "../support/fleetDashboardInject.js";

describe("fleet dashboard", () => {
  let fleet: Fleet;
  sharedFleet((s) => {
    ({ fleet } = s);
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
