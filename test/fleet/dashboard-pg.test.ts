/**
 * The dashboard's queries on PostgreSQL (issue 16): the same seed on SQLite and on a real PostgreSQL server
 * (started in a temporary directory) gives the same JSON API answers, and logins, throttling and sessions
 * work there too. Needs Debian's `postgresql` (`.ci/run` installs it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_FAILURES_PER_ACCOUNT } from "../../src/fleet/web/accounts.js";
import { type Fleet, MANAGER, seededRange, startFleet, UNITS } from "../support/fleetDashboard.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";

const HOST = "fleet.test";
const form = { host: HOST, origin: `http://${HOST}`, "content-type": "application/x-www-form-urlencoded" };

describe("fleet dashboard on PostgreSQL", () => {
  let pg: TestPostgres;
  let onPg: Fleet;
  let onSqlite: Fleet;

  beforeAll(async () => {
    pg = await startPostgres();
    onPg = await startFleet(pg.url);
    onSqlite = await startFleet(":memory:");
  }, 30_000);
  afterAll(async () => {
    await onPg?.close();
    await onSqlite?.close();
    await pg?.stop();
  });

  async function cookie(f: Fleet): Promise<string> {
    const r = await f.app.inject({
      method: "POST",
      url: "/login",
      headers: form,
      payload: new URLSearchParams(MANAGER).toString(),
    });
    expect(r.statusCode, r.body).toBe(303);
    const line = String(r.headers["set-cookie"]);
    return /vendd_session=[^;]+/.exec(line)?.[0] ?? "";
  }

  it("answers every API query exactly as on SQLite", async () => {
    const [a, b] = [await cookie(onPg), await cookie(onSqlite)];
    const { from, to } = seededRange();
    const urls = [
      "/api/v1/overview",
      "/api/v1/units",
      "/api/v1/bundles",
      ...Object.values(UNITS).map((id) => `/api/v1/units/${encodeURIComponent(id)}`),
      ...["day", "unit", "item"].map((g) => `/api/v1/sales?from=${from}&to=${to}&group=${g}`),
      `/api/v1/sales?from=${from}&to=${to}&group=item&unit=${encodeURIComponent(UNITS.lobby)}`,
    ];
    for (const url of urls) {
      const p = await onPg.app.inject({ url, headers: { cookie: a } });
      const s = await onSqlite.app.inject({ url, headers: { cookie: b } });
      expect(p.statusCode, url).toBe(200);
      expect(p.json(), url).toEqual(s.json());
    }
    for (const url of ["/", "/units", "/sales", "/bundles", `/units/${encodeURIComponent(UNITS.evil)}`]) {
      const p = await onPg.app.inject({ url, headers: { cookie: a } });
      expect(p.statusCode, url).toBe(200);
    }
  });

  it("throttles logins from the shared login_attempts table", async () => {
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT; i++) {
      const r = await onPg.app.inject({
        method: "POST",
        url: "/login",
        headers: form,
        payload: new URLSearchParams({ username: "vic", password: `wrong-password-${i}` }).toString(),
      });
      expect(r.statusCode).toBe(401);
    }
    const r = await onPg.app.inject({
      method: "POST",
      url: "/login",
      headers: form,
      payload: new URLSearchParams({ username: "vic", password: "viewer-password-1" }).toString(),
    });
    expect(r.statusCode).toBe(429);
    expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
  });
});
