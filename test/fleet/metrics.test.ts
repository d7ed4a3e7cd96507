/**
 * The fleet's `/metrics` (issue 45): the composed fleet app (unit API, dashboard, every feature) listening on
 * loopback, units enrolling, sending heartbeats and sessions through the signed unit API, and a scrape over
 * HTTP parsed by a strict Prometheus text parser (test/support/promText.ts). Fleet-level series only (no
 * unit, session or person in any label); access by the bearer token from the fleet's secrets or a manager's
 * session, refused otherwise.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { loadFleetConfig } from "../../src/fleet/config.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { fleetPlugins } from "../../src/fleet/features.js";
import { ROLLOUT_STATES, UNIT_STATES } from "../../src/fleet/metrics/index.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit, revokeUnit } from "../../src/fleet/units/index.js";
import { addUser } from "../../src/fleet/web/accounts.js";
import { fleetContext, send, session, simUnit } from "../support/fleet.js";
import { loginAs } from "../support/fleetDashboardInject.js";
import { heartbeat, T0 } from "../support/fleetUnitApi.js";
import { type Family, parsePromText, sampleValue } from "../support/promText.js";

const TOKEN = "metrics-token-0123456789abcdef-xyz";
const MANAGER = { username: "mia", password: "manager-password-1" };
const VIEWER = { username: "vic", password: "viewer-password-1" };

let clock: ManualClock;
let ctx: FleetContext;
let fdb: FleetDb;
let app: FastifyInstance;
let base: string;

beforeEach(async () => {
  clock = new ManualClock(T0);
  ({ ctx, fdb } = await fleetContext(":memory:", clock, "Europe/Oslo"));
  await addUser(ctx.db, MANAGER.username, MANAGER.password, "manager", T0);
  await addUser(ctx.db, VIEWER.username, VIEWER.password, "viewer", T0);
  app = await createFleetApp(ctx, {
    plugins: fleetPlugins({ metricsToken: TOKEN }, { secureCookies: false }),
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  base = `http://127.0.0.1:${address.port}`;
});

afterEach(async () => {
  await app.close();
  await fdb.close();
});

const scrape = (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
  fetch(`${base}/metrics`, { headers });

async function families(): Promise<Map<string, Family>> {
  const r = await scrape();
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePromText(await r.text());
}

/** Enrols `id` through the unit API; approved unless told otherwise. */
async function enrol(id: string, decision: "approve" | "revoke" | "none" = "approve") {
  const u = simUnit(id);
  expect((await send(app, u.key, "POST", "/enroll", { unitId: id, label: id }, clock.now())).status).toBe(
    202,
  );
  if (decision !== "none") expect(await approveUnit(ctx, id, MANAGER.username)).toBe("done");
  if (decision === "revoke") expect(await revokeUnit(ctx, id, MANAGER.username)).toBe("done");
  return u;
}

describe("fleet /metrics", () => {
  it("serves units by state, the last minute's vends and amounts, ingest latency, alerts and rollouts", async () => {
    // Nothing yet: every series there, at zero.
    const empty = await families();
    for (const state of UNIT_STATES)
      expect(sampleValue(empty, "vendd_fleet_units", { state }), state).toBe(0);
    for (const state of ROLLOUT_STATES)
      expect(sampleValue(empty, "vendd_fleet_rollouts", { state }), state).toBe(0);
    expect(sampleValue(empty, "vendd_fleet_vends_per_minute")).toBe(0);
    expect(sampleValue(empty, "vendd_fleet_ingest_duration_seconds_count")).toBe(0);
    expect(sampleValue(empty, "vendd_fleet_alerts_open", { acknowledged: "false" })).toBe(0);
    expect(sampleValue(empty, "vendd_fleet_alert_deliveries_failing")).toBe(0);

    const lobby = await enrol("vm-lobby");
    await enrol("vm-cellar");
    await enrol("vm-new", "none");
    await enrol("vm-gone", "revoke");
    expect(
      (
        await send(
          app,
          lobby.key,
          "POST",
          "/heartbeat",
          { ...heartbeat("vm-lobby"), at: clock.now() },
          clock.now(),
        )
      ).status,
    ).toBe(200);
    const now = clock.now();
    const closed = (seq: number, id: string, ago: number, over: Parameters<typeof session>[2] = {}) =>
      session(seq, id, { openedAt: now - ago - 20_000, closedAt: now - ago, ...over });
    const batches = [
      [closed(1, "s-old", 5 * 60_000), closed(2, "s-a", 30_000)],
      [
        closed(3, "s-b", 10_000, {
          price: 600,
          approved: 600,
          captured: 600,
          refunded: 300,
          vends: [
            { item: 3, price: 300, outcome: "success" },
            { item: 4, price: 300, outcome: "success" },
          ],
        }),
        closed(4, "s-eur", 5_000, { currency: "EUR", captured: 120, approved: 120, price: 120 }),
      ],
    ];
    for (const events of batches) {
      const r = await send(app, lobby.key, "POST", "/events", { unitId: "vm-lobby", events }, now);
      expect(r.status).toBe(200);
    }
    await ctx.db
      .insertInto("bundles")
      .values({
        id: "cfg-8",
        kind: "config",
        version: "8",
        targets: '["*"]',
        expires_at: null,
        sha256: "0".repeat(64),
        size: 3,
        bytes: new Uint8Array([1, 2, 3]),
        uploaded_by: MANAGER.username,
        uploaded_at: now,
      })
      .execute();
    await ctx.db
      .insertInto("rollouts")
      .values([
        {
          bundle_id: "cfg-8",
          unit_id: "vm-lobby",
          state: "healthy",
          reason: "",
          updated_at: now,
          phase: null,
        },
        {
          bundle_id: "cfg-8",
          unit_id: "vm-cellar",
          state: "refused",
          reason: "x",
          updated_at: now,
          phase: null,
        },
      ])
      .execute();

    const text = await (await scrape()).text();
    const f = parsePromText(text);
    expect(
      Object.fromEntries(UNIT_STATES.map((state) => [state, sampleValue(f, "vendd_fleet_units", { state })])),
    ).toEqual({ online: 1, offline: 1, stopped: 0, pending: 1, revoked: 1 });
    // The last minute: s-a (1 vend, 2.50 NOK), s-b (2 vends, 6.00 less 3.00 refunded), s-eur; not s-old.
    expect(sampleValue(f, "vendd_fleet_vends_per_minute")).toBe(4);
    expect(sampleValue(f, "vendd_fleet_sales_amount_per_minute_minor", { currency: "NOK" })).toBe(550);
    expect(sampleValue(f, "vendd_fleet_sales_amount_per_minute_minor", { currency: "EUR" })).toBe(120);
    expect(sampleValue(f, "vendd_fleet_rollouts", { state: "healthy" })).toBe(1);
    expect(sampleValue(f, "vendd_fleet_rollouts", { state: "refused" })).toBe(1);
    expect(sampleValue(f, "vendd_fleet_rollouts", { state: "pending" })).toBe(0);
    // Two batches stored: the histogram counted both (its buckets checked cumulative by the parser).
    const ingest = f.get("vendd_fleet_ingest_duration_seconds");
    expect(ingest?.type).toBe("histogram");
    expect(sampleValue(f, "vendd_fleet_ingest_duration_seconds_count")).toBe(2);
    expect(sampleValue(f, "vendd_fleet_ingest_duration_seconds_sum")).toBeGreaterThan(0);
    for (const name of ["vendd_fleet_units", "vendd_fleet_vends_per_minute", "vendd_fleet_alerts_open"])
      expect(f.get(name)?.type, name).toBe("gauge");
    // Fleet-level only: no unit, session, order or person is in the text.
    for (const word of ["vm-lobby", "vm-cellar", "s-a", "o-s-a", "p-s-a", MANAGER.username])
      expect(text).not.toContain(word);
    // Every family is documented.
    for (const family of f.values()) expect(family.help, family.name).toMatch(/\w/);
    // A minute on, nothing new closed: the per-minute series are back to zero.
    clock.advance(61_000);
    const later = await families();
    expect(sampleValue(later, "vendd_fleet_vends_per_minute")).toBe(0);
    expect(
      sampleValue(later, "vendd_fleet_sales_amount_per_minute_minor", { currency: "NOK" }),
    ).toBeUndefined();
  });

  it("is served to the bearer token or a manager's session, refused to anyone else", async () => {
    const none = await scrape({});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="vendd-fleet"');
    expect(await none.text()).toContain("metricsToken in the fleet's secrets file");
    expect((await scrape({ authorization: "Bearer not-the-token-0123456789abcdef" })).status).toBe(401);
    expect(
      (await scrape({ authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` })).status,
    ).toBe(401);
    expect((await scrape({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    const manager = await loginAs(app, MANAGER);
    const viewer = await loginAs(app, VIEWER);
    const asManager = await scrape({ cookie: manager.cookie });
    expect(asManager.status).toBe(200);
    parsePromText(await asManager.text());
    const asViewer = await scrape({ cookie: viewer.cookie });
    expect(asViewer.status).toBe(403);
    expect(await asViewer.text()).toContain("metrics are for managers");
    expect((await scrape({ cookie: "vendd_session=forged-session-token-000000" })).status).toBe(401);
  });

  it("without a token only managers' sessions read it", async () => {
    await app.close();
    app = await createFleetApp(ctx, { plugins: fleetPlugins({}, { secureCookies: false }) });
    await app.ready();
    const r = await app.inject({ url: "/metrics", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.statusCode).toBe(401);
    const manager = await loginAs(app, MANAGER);
    const ok = await app.inject({ url: "/metrics", headers: { cookie: manager.cookie } });
    expect(ok.statusCode).toBe(200);
    parsePromText(ok.body);
  });
});

describe("the fleet config's metricsToken", () => {
  it("comes from the secrets file or $VENDD_METRICS_TOKEN, never the main file, and is redacted", () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-metrics-cfg-"));
    try {
      const config = join(dir, "fleet.yaml");
      writeFileSync(config, "secretsFile: secrets.yaml\n");
      writeFileSync(join(dir, "secrets.yaml"), `metricsToken: ${TOKEN}\n`, { mode: 0o600 });
      const cfg = loadFleetConfig(config, {});
      expect(cfg.metricsToken).toBe(TOKEN);
      expect(cfg.secrets).toContain(TOKEN);
      writeFileSync(config, "db: fleet.db\n");
      expect(loadFleetConfig(config, { VENDD_METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
      expect(() => loadFleetConfig(config, { VENDD_METRICS_TOKEN: "short" })).toThrow(
        /metricsToken.*at least 24 characters/,
      );
      writeFileSync(config, `metricsToken: ${TOKEN}\n`);
      expect(() => loadFleetConfig(config, {})).toThrow(/secrets do not belong in the main file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
