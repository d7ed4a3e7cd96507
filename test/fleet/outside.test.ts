/**
 * The fleet as it is met from outside (issue 33): the whole app (unit API and dashboard) answering unknown
 * paths with its security headers and the APIs' one error shape, the same-origin check behind a trusted
 * TLS proxy (and not without trust), units stopped cleanly shown as stopped with no backlog the fleet
 * already holds, bundles checked against the fleet's own keys (unverified without), and the start-up
 * warnings of `vendd fleet serve`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { storeBundle } from "../../src/fleet/bundles/store.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { registerFleetDashboard } from "../../src/fleet/features.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { CONTENT_SECURITY_POLICY } from "../../src/fleet/web/index.js";
import { createBundle } from "../../src/update/bundle.js";
import { makeKey, signWith, type TestKey } from "../../src/update/update.test-support.js";
import { CLI, vendd } from "../support/cli.js";
import { MANAGER, NOW, openTestFleet, seed } from "../support/fleetDashboard.js";
import { HOST, type Login, loginAs } from "../support/fleetDashboardInject.js";

let dir = "";
let key: TestKey;
let other: TestKey;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-fleet-outside-"));
  [key, other] = await Promise.all([makeKey("fleet-a"), makeKey("fleet-b")]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface App {
  app: FastifyInstance;
  ctx: FleetContext;
  db: FleetDb;
}

async function wholeApp(trustProxy: boolean): Promise<App> {
  const { db, ctx } = await openTestFleet(":memory:", new ManualClock(NOW));
  await seed(ctx);
  const app = await createFleetApp(ctx, {
    trustProxy,
    plugins: [async (a, c) => registerFleetDashboard(a, c, {})],
  });
  await app.ready();
  return { app, ctx, db };
}

function expectSecurityHeaders(r: { headers: Record<string, unknown> }, what: string): void {
  expect(r.headers["content-security-policy"], what).toBe(CONTENT_SECURITY_POLICY);
  expect(r.headers["x-frame-options"], what).toBe("DENY");
  expect(r.headers["x-content-type-options"], what).toBe("nosniff");
  expect(r.headers["referrer-policy"], what).toBe("same-origin");
}

describe("the whole fleet app from outside", () => {
  let f: App;
  let manager: Login;
  beforeAll(async () => {
    f = await wholeApp(false);
    manager = await loginAs(f.app, MANAGER);
  });
  afterAll(async () => {
    await f.app.close();
    await f.db.close();
  });

  it("answers unknown paths with the security headers: a page, or the APIs' one error shape", async () => {
    const page = await f.app.inject({ url: "/no/such/page", headers: { host: HOST } });
    expect(page.statusCode).toBe(404);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expectSecurityHeaders(page, "/no/such/page");
    for (const url of ["/api/v1/nothing", "/api/unit/v1/nothing", "/api/other"]) {
      const r = await f.app.inject({ url, headers: { host: HOST } });
      expect(r.statusCode, url).toBe(404);
      expect(r.json(), url).toEqual({ error: { code: "not_found", message: "no such path" } });
      expectSecurityHeaders(r, url);
    }
    // The dashboard API and the unit API answer their refusals in that same shape.
    const anon = await f.app.inject({ url: "/api/v1/units", headers: { host: HOST } });
    expect(anon.statusCode).toBe(401);
    expect(anon.json()).toEqual({
      error: { code: "unauthenticated", message: "log in first (POST /login)" },
    });
    const none = await f.app.inject({
      url: "/api/v1/units/nobody",
      headers: { host: HOST, cookie: manager.cookie },
    });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({ error: { code: "not_found", message: "no such unit" } });
    const badDays = await f.app.inject({
      url: "/api/v1/sales?from=yesterday",
      headers: { host: HOST, cookie: manager.cookie },
    });
    expect(badDays.statusCode).toBe(400);
    expect(badDays.json()).toMatchObject({ error: { code: "bad_request" } });
    const unitText = await f.app.inject({
      method: "POST",
      url: "/api/unit/v1/heartbeat",
      headers: { host: HOST, "content-type": "text/plain" },
      payload: "hello",
    });
    expect(unitText.statusCode).toBe(415);
    expect(unitText.json()).toMatchObject({ error: { code: "bad_request" } });
    expectSecurityHeaders(unitText, "unit API 415");
  });

  it("shows a unit stopped cleanly as stopped, and no backlog the fleet already committed", async () => {
    const now = f.ctx.clock.now();
    const hb = (state: string, events: number, lastSeq: number) =>
      JSON.stringify({
        unitId: "x",
        at: now,
        state,
        reason: "",
        versions: { vendd: "0.1.0", config: "1", release: null },
        backlog: { events, oldestAt: now - 30 * 60_000, lastSeq },
        journal: { ok: true, detail: "ok" },
        vmc: "up",
        payment: "up",
        unresolved: 0,
      });
    const row = (id: string, heartbeat: string, events: number, committed: number) => ({
      id,
      public_key: `pk-${id}`,
      fingerprint: `fp:${id}`,
      label: id,
      status: "approved" as const,
      enrolled_at: now - 86_400_000,
      decided_by: MANAGER.username,
      decided_at: now - 86_400_000,
      committed_seq: committed,
      last_seen_at: now - 20 * 60_000,
      last_heartbeat: heartbeat,
      config_version: "1",
      release_version: null,
      backlog_events: events,
      backlog_oldest_at: now - 30 * 60_000,
      unresolved: 0,
    });
    await f.ctx.db
      .insertInto("units")
      .values([
        row("u-stopped", hb("stopping", 1, 40), 1, 40),
        row("u-behind", hb("inService", 7, 45), 7, 40),
      ])
      .execute();
    const get = (url: string) =>
      f.app.inject({ url, headers: { host: HOST, cookie: manager.cookie } }).then((r) => r.json());
    const units = (await get("/api/v1/units")) as {
      units: { id: string; backlogEvents: number; stopped: boolean; attention: string[] }[];
    };
    const stopped = units.units.find((u) => u.id === "u-stopped");
    expect(stopped).toMatchObject({ backlogEvents: 0, stopped: true, attention: [] });
    // A unit still behind: only what the fleet does not hold yet (seq 41..45), not the 7 it reported.
    expect(units.units.find((u) => u.id === "u-behind")).toMatchObject({ backlogEvents: 5, stopped: false });
    const o = (await get("/api/v1/overview")) as {
      units: { stopped: number };
      offline: { id: string }[];
      attention: { id: string }[];
    };
    expect(o.units.stopped).toBe(1);
    expect(o.offline.map((u) => u.id)).not.toContain("u-stopped");
    expect(o.offline.map((u) => u.id)).toContain("u-behind");
    expect(o.attention.map((u) => u.id)).not.toContain("u-stopped");
    const page = await f.app.inject({ url: "/units", headers: { host: HOST, cookie: manager.cookie } });
    expect(page.body).toMatch(
      /u-stopped<\/a><\/td><td>u-stopped<\/td><td><span class="stopped">stopped<\/span>/,
    );
  });

  it("marks a bundle stored without fleet bundle keys unverified on the dashboard", async () => {
    const { bundle } = createBundle({
      configText: "unit: {id: vm-0001}\n",
      version: 4,
      targets: ["vm-0001"],
      expires: "2099-01-01",
    });
    const stored = await storeBundle(f.ctx, signWith(bundle, [key]), "mia");
    expect(stored.verified).toBe(false);
    const page = await f.app.inject({ url: "/bundles", headers: { host: HOST, cookie: manager.cookie } });
    expect(page.body).toContain(`${stored.id} <span class="warn"`);
    expect(page.body).toContain("unverified");
    // With the fleet's keys: checked, and a bundle signed by another key refused naming the fleet's setting.
    const { bundle: b5 } = createBundle({
      configText: "x: 1\n",
      version: 5,
      targets: ["vm-0001"],
      expires: "2099-01-01",
    });
    expect((await storeBundle(f.ctx, signWith(b5, [key]), "mia", [key.sk.publicKey])).verified).toBe(true);
    const { bundle: b6 } = createBundle({
      configText: "x: 2\n",
      version: 6,
      targets: ["vm-0001"],
      expires: "2099-01-01",
    });
    await expect(storeBundle(f.ctx, signWith(b6, [other]), "mia", [key.sk.publicKey])).rejects.toThrow(
      /not in the fleet's bundle keys \(bundleKeys in the fleet config, or --bundle-key\)/,
    );
  });
});

describe("the same-origin check behind a TLS proxy", () => {
  const login = (app: FastifyInstance, headers: Record<string, string>) =>
    app.inject({
      method: "POST",
      url: "/login",
      remoteAddress: "10.0.0.9",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      payload: new URLSearchParams(MANAGER).toString(),
    });
  const proxied = {
    host: "127.0.0.1:8380",
    "x-forwarded-host": "fleet.example",
    "x-forwarded-proto": "https",
  };

  it("with trustProxy: the forwarded host and protocol are this site", async () => {
    const f = await wholeApp(true);
    try {
      expect((await login(f.app, { ...proxied, origin: "https://fleet.example" })).statusCode).toBe(303);
      // The forwarded protocol counts: an http origin is another site.
      expect((await login(f.app, { ...proxied, origin: "http://fleet.example" })).statusCode).toBe(403);
      expect((await login(f.app, { ...proxied, origin: "https://evil.example" })).statusCode).toBe(403);
    } finally {
      await f.app.close();
      await f.db.close();
    }
  });

  it("without trustProxy: forwarded headers are ignored, the Host header is this site", async () => {
    const f = await wholeApp(false);
    try {
      expect((await login(f.app, { ...proxied, origin: "https://fleet.example" })).statusCode).toBe(403);
      expect((await login(f.app, { ...proxied, origin: "http://127.0.0.1:8380" })).statusCode).toBe(303);
    } finally {
      await f.app.close();
      await f.db.close();
    }
  });
});

/** `vendd fleet serve` until it prints its URL; then its standard error so far, and it is stopped. */
async function startupLog(args: string[]): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [CLI, "fleet", "serve", ...args], {
    env: { ...process.env, VENDD_FAULT_POINT: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fleet serve did not start: ${err}`)), 30_000);
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("serving ")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => reject(new Error(`fleet serve exited: ${err}`)));
  });
  child.kill("SIGTERM");
  await exited;
  return err;
}

describe("vendd fleet serve and bundle upload from outside", () => {
  it("warns at start-up of plain HTTP off loopback (pointing to the TLS docs) and of no bundle keys", async () => {
    const pub = join(dir, "serve.pub");
    writeFileSync(pub, key.publicKeyText);
    const open = await startupLog(["--listen", "0.0.0.0:0", "--db", join(dir, "open.db")]);
    expect(open).toMatch(/"msg":"serving plain HTTP on a non-loopback address[^"]*docs\/fleet-server\.md"/);
    expect(open).toContain("no bundle keys (bundleKeys in the fleet config, or --bundle-key)");
    const quiet = await startupLog([
      "--listen",
      "127.0.0.1:0",
      "--db",
      join(dir, "quiet.db"),
      "--bundle-key",
      pub,
    ]);
    expect(quiet).not.toContain("plain HTTP");
    expect(quiet).not.toContain("no bundle keys");
  }, 60_000);

  it("bundle upload checks the fleet config's bundleKeys: a tampered bundle is refused; none configured stores it UNVERIFIED", async () => {
    const pub = join(dir, "k.pub");
    writeFileSync(pub, key.publicKeyText);
    const db = join(dir, "upload.db");
    const config = join(dir, "fleet.yaml");
    writeFileSync(config, `db: ${db}\nbundleKeys: [k.pub]\n`);
    // Admin commands never create a database (issue 32): `fleet init` does.
    expect((await vendd(["fleet", "init", "--config", config])).code).toBe(0);
    const { bundle } = createBundle({
      configText: "unit: {id: vm-0001, name: Lobby}\n",
      version: 3,
      targets: ["vm-0001"],
      expires: "2099-01-01",
    });
    const signed = signWith(bundle, [key]);
    const tampered = Buffer.from(signed);
    const at = tampered.indexOf("Lobby");
    tampered.write("Lobbx", at);
    const file = join(dir, "tampered.vbundle");
    writeFileSync(file, tampered);
    const refused = await vendd(["fleet", "bundle", "upload", file, "--config", config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("refused (bad_signature)");
    const foreignFile = join(dir, "foreign.vbundle");
    writeFileSync(foreignFile, signWith(bundle, [other]));
    const foreign = await vendd(["fleet", "bundle", "upload", foreignFile, "--config", config]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain("not in the fleet's bundle keys");
    expect(foreign.stderr).not.toContain("updates.publicKeys");
    const goodFile = join(dir, "good.vbundle");
    writeFileSync(goodFile, signed);
    const ok = await vendd(["fleet", "bundle", "upload", goodFile, "--config", config]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^stored: bundle/);
    // No keys anywhere: stored, but said to be unchecked, and marked so.
    expect((await vendd(["fleet", "init", "--db", join(dir, "bare.db")])).code).toBe(0);
    const bare = await vendd(["fleet", "bundle", "upload", foreignFile, "--db", join(dir, "bare.db")]);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stderr).toContain("warning: no bundle keys");
    expect(bare.stdout).toMatch(/^stored UNVERIFIED: bundle/);
  }, 60_000);
});
