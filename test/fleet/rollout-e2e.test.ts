/**
 * Issue 41 acceptance, end to end: two real unit daemons (`vendd run`, emulator, MDB over a PTY) enrolled to
 * a real fleet (`vendd fleet serve` on SQLite). One fleet-wide config bundle uploaded with
 * `vendd fleet bundle upload` reaches both through the heartbeat's bundle hint within a minute (heartbeat
 * 5 s, jitter under 2 s), each applies it (its applier started by the inbox as `vendd-bundle.path` does,
 * the daemon restarted, the health gate passed, committed), both keep their own id, key and point of sale,
 * both sell afterwards, and `vendd config print --origin` shows the layers. Then a bundle built from the
 * other unit's whole config reaches unit B, is refused there naming the identity keys, nothing changes, and
 * the fleet shows the refusal with its reason (`vendd fleet rollout status`). The world:
 * test/support/fleetDaemon.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/postgresServer.js";
import { waitUntil } from "../../src/chaos/actors.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { createBundle } from "../../src/update/bundle.js";
import { readState } from "../../src/update/state.js";
import { makeKey, signWith, type TestKey } from "../../src/update/update.test-support.js";
import { launchWatchedChromium, requireChromium, shot, type WatchedBrowser } from "../support/browser.js";
import { vendd } from "../support/cli.js";
import { HAVE_SOCAT } from "../support/daemon.js";
import { FleetDaemon, HttpSimUnit, withoutIdentity } from "../support/fleetDaemon.js";
import { enrol, expectBuiltCli, type FleetProc, startFleet, stopFleet } from "../support/fleetE2e.js";

expectBuiltCli();

const ARTIFACTS = join("test-artifacts", "fleet-rollout-e2e");

describe("a fleet-wide config bundle reaches two real units through the heartbeat hint", () => {
  let dir: string;
  let db: string;
  let fleet: FleetProc;
  let emu: Emulator;
  let key: TestKey;
  const units: FleetDaemon[] = [];

  beforeAll(async () => {
    expect(HAVE_SOCAT, "socat is needed for the VMC's PTY (.ci/run installs it)").toBe(true);
    dir = mkdtempSync(join(tmpdir(), "vendd-rollout-e2e-"));
    db = join(dir, "fleet.db");
    fleet = await startFleet(db, await freePort());
    emu = await startEmulator({ pollDelayMs: 50 });
    key = await makeKey("e2e");
    writeFileSync(join(dir, "bundle.pub"), key.publicKeyText);
    const ref = { url: fleet.url, db };
    units.push(await FleetDaemon.create(emu, "vm-a", "424242424242401", ref, key, 1));
    units.push(await FleetDaemon.create(emu, "vm-b", "424242424242402", ref, key, 2));
    for (const u of units) await u.start();
  }, 90_000);

  afterAll(async () => {
    await watched?.browser.close();
    if (profile !== "") rmSync(profile, { recursive: true, force: true });
    for (const u of units) await u.close();
    await emu?.close();
    if (fleet !== undefined) await stopFleet(fleet);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** A signed config bundle of `raw` for `targets`, uploaded with the built CLI; its id and sha256. */
  async function upload(raw: Record<string, unknown>, version: number, targets: string[]) {
    const file = bundleFile(raw, version, targets);
    const r = await vendd([
      "fleet",
      "bundle",
      "upload",
      file,
      "--db",
      db,
      "--bundle-key",
      join(dir, "bundle.pub"),
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { id: string; sha256: string; verified: boolean };
  }

  async function fleetStatus(bundleId: string) {
    const r = await vendd(["fleet", "rollout", "status", bundleId, "--db", db, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as {
      state: string;
      reason: string;
      units: { unitId: string; state: string; reason: string }[];
    };
  }

  /** A signed config bundle file of `raw` for `targets` (not uploaded). */
  function bundleFile(raw: Record<string, unknown>, version: number, targets: string[]): string {
    const { bundle } = createBundle({
      configText: `${JSON.stringify(raw, null, 2)}\n`,
      release: null,
      version,
      targets,
      expires: "2031-01-01",
    });
    const file = join(dir, `v${version}.vbundle`);
    writeFileSync(file, signWith(bundle, [key]));
    return file;
  }

  /** The sha256 the fleet holds for a bundle. */
  async function shaOf(bundleId: string): Promise<string> {
    const fdb = await openFleetDb(db);
    try {
      const r = await fdb.db
        .selectFrom("bundles")
        .select("sha256")
        .where("id", "=", bundleId)
        .executeTakeFirstOrThrow();
      return r.sha256;
    } finally {
      await fdb.close();
    }
  }

  /** How many steps of the bundle `sha256` the fleet stored from units `which` picks. */
  async function stepsOf(sha256: string, which: (unitId: string) => boolean): Promise<number> {
    const fdb = await openFleetDb(db);
    try {
      const rows = await fdb.db
        .selectFrom("rollout_steps as s")
        .innerJoin("bundles as b", "b.id", "s.bundle_id")
        .select(["s.unit_id"])
        .where("b.sha256", "=", sha256)
        .execute();
      return rows.filter((r) => which(r.unit_id)).length;
    } finally {
      await fdb.close();
    }
  }

  it("both take it within a minute, keep their identity, show the layers and sell afterwards", async () => {
    const [a, b] = units as [FleetDaemon, FleetDaemon];
    // Both sell before.
    for (const u of units) await u.expectSale(3, 150);
    // The fleet-wide config: unit A's file without any identity key, one change (the session maximum).
    const fleetWide = withoutIdentity(a.fullConfig);
    (fleetWide.engine as Record<string, unknown>).sessionMax = "25.00";
    const uploadedAt = Date.now();
    const b2 = await upload(fleetWide, 2, ["fleet-a"]);
    expect(b2.verified).toBe(true);
    const took = await waitUntil(
      () => units.every((u) => readState(u.stateDir).highWater === 2 && u.applies.length > 0),
      60_000,
    );
    const elapsed = Date.now() - uploadedAt;
    expect(
      took,
      `not committed on both within a minute: ${units.map((u) => `${u.id}: ${JSON.stringify(u.applies)}`).join("\n")}`,
    ).toBe(true);
    expect(elapsed).toBeLessThan(60_000);
    for (const u of units) {
      expect(u.applies.at(-1)?.code, u.applies.at(-1)?.stderr).toBe(0);
      await u.unit.whenInService();
    }
    // Each kept its own id, key and point of sale; the change came from the fleet layer.
    for (const u of units) {
      const o = await u.origins();
      expect(o.get("unit.id")).toEqual({ value: u.id, origin: "identity" });
      expect(o.get("payment.legacy.posId")).toEqual({ value: `pos-${u.id}`, origin: "identity" });
      expect(o.get("payment.legacy.posUnitId")).toEqual({ value: u.beacon, origin: "identity" });
      expect(o.get("fleet.keyFile")).toEqual({
        value: join(u.unit.files.dir, "fleet.key"),
        origin: "identity",
      });
      expect(o.get("engine.sessionMax")).toEqual({ value: "25.00", origin: "fleet" });
      expect(o.get("journal.retentionDays")?.origin).toBe("default");
    }
    const text = await vendd(["config", "print", a.configPath, "--origin"]);
    expect(text.stdout).toMatch(/^identity +unit\.id = "vm-a"$/m);
    expect(text.stdout).toMatch(/^fleet +engine\.sessionMax = "25\.00"$/m);
    // The fleet saw every step of both, through the units' step reports.
    await expect
      .poll(async () => (await fleetStatus(b2.id)).units.map((s) => `${s.unitId}:${s.state}`).sort(), {
        timeout: 20_000,
        interval: 500,
      })
      .toEqual(["vm-a:committed", "vm-b:committed"]);
    // Both sell afterwards, each at its own point of sale.
    const mark = emu.ledger().at(-1)?.seq ?? 0;
    for (const u of units) await u.expectSale(4, 200);
    // At the service: each unit's sales under its own orders and point of sale, after the bundle too.
    for (const u of units) {
      const own = emu.ledger().filter((e) => e.seq > mark && e.orderId.startsWith(`${u.id}-`));
      expect(own.length, JSON.stringify(emu.ledger().slice(-4))).toBeGreaterThan(0);
      // The restarted daemon (the applier's restart) runs as its own point of sale and beacon.
      expect(u.unit.starts).toBeGreaterThanOrEqual(2);
      expect(u.unit.daemon?.log).toContain(
        `"posId":"pos-${u.id}","beaconId":"${u.beacon}","msg":"unit in service"`,
      );
    }
    expect(readFileSync(b.configPath, "utf8")).not.toContain("vm-a");
  }, 150_000);

  it("a bundle carrying the other unit's identity is refused on the unit naming the key; the fleet shows why", async () => {
    const [a, b] = units as [FleetDaemon, FleetDaemon];
    const before = readFileSync(b.configPath, "utf8");
    const identityBefore = readFileSync(join(b.unit.files.dir, "identity.yaml"), "utf8");
    // Unit A's whole config (its identity included) for unit B: the issue's report.
    const bad = await upload(a.fullConfig, 3, ["vm-b"]);
    await expect
      .poll(async () => (await fleetStatus(bad.id)).units.find((s) => s.unitId === "vm-b"), {
        timeout: 60_000,
        interval: 500,
      })
      .toMatchObject({ state: "refused", reason: expect.stringMatching(/unit\.id/) });
    const last = b.applies.at(-1);
    expect(last?.code).toBe(1);
    expect(last?.stderr).toMatch(/refused: the bundle sets unit\.id, unit\.name, .*payment\.legacy\.posId/);
    const status = await fleetStatus(bad.id);
    expect(status.units.find((s) => s.unitId === "vm-b")?.reason).toMatch(
      /the bundle sets unit\.id, unit\.name.*payment\.legacy\.posId.*fleet\.keyFile/,
    );
    expect(status.units.some((s) => s.unitId === "vm-a")).toBe(false);
    // Nothing changed on B: its files, its high-water mark; it still sells as itself.
    expect(readFileSync(b.configPath, "utf8")).toBe(before);
    expect(readFileSync(join(b.unit.files.dir, "identity.yaml"), "utf8")).toBe(identityBefore);
    expect(readState(b.stateDir).highWater).toBe(2);
    await b.expectSale(5, 250);
    expect((await b.origins()).get("unit.id")).toEqual({ value: "vm-b", origin: "identity" });
  }, 120_000);

  // 20 simulated units on the signed unit API (sorted after the real ones: the canary is vm-a and vm-b).
  const sims: HttpSimUnit[] = [];
  async function enrolSims(): Promise<void> {
    if (sims.length > 0) return;
    for (let i = 1; i <= 20; i++) {
      const s = new HttpSimUnit(`vm-s${String(i).padStart(2, "0")}`, fleet.url);
      await enrol(fleet.url, db, s.id, s.key);
      sims.push(s);
    }
  }
  const ALL = () => ["vm-a", "vm-b", ...sims.map((s) => s.id)];

  async function rollout(file: string, extra: string[]): Promise<string> {
    const r = await vendd([
      "fleet",
      "rollout",
      "create",
      "--bundle",
      file,
      "--all",
      "--canary",
      "2",
      "--wave",
      "50%",
      "--db",
      db,
      "--by",
      "mia",
      "--json",
      ...extra,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const made = JSON.parse(r.stdout) as { bundleId: string; units: number; phases: number };
    expect(made).toMatchObject({ units: 22, phases: 3 });
    return made.bundleId;
  }

  async function cliStatus(bundleId: string) {
    const r = await vendd(["fleet", "rollout", "status", bundleId, "--db", db]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  }

  /** What the dashboard's rollout page shows (Chromium, logged in as the manager): state, units' rows. */
  async function pageOf(bundleId: string) {
    const page = (await browser()).page;
    await page.goto(`${fleet.url}/rollouts/${bundleId}`);
    const state = (await page.textContent("#rollout-state")) ?? "";
    const rows = await page.$$eval("table.units tbody tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
    );
    const counts = await page.$$eval("table.counts td", (tds) =>
      Object.fromEntries(tds.map((td) => [td.getAttribute("data-state") ?? "", Number(td.textContent)])),
    );
    return {
      page,
      state,
      units: new Map(rows.map((r) => [r[0] ?? "", { state: r[2], reason: r[3] }])),
      counts,
    };
  }

  let watched: WatchedBrowser | null = null;
  let profile = "";
  async function browser(): Promise<WatchedBrowser> {
    if (watched !== null) return watched;
    requireChromium(ARTIFACTS);
    const add = await vendd(["fleet", "user", "add", "mia", "--role", "manager", "--db", db], {
      input: "manager-password-1\n",
    });
    expect(add.code, add.stderr).toBe(0);
    profile = mkdtempSync(join(tmpdir(), "vendd-chromium-"));
    const w = await launchWatchedChromium(profile);
    await w.page.goto(`${fleet.url}/login`);
    await w.page.fill("input[name=username]", "mia");
    await w.page.fill("input[name=password]", "manager-password-1");
    await Promise.all([w.page.waitForURL(`${fleet.url}/`), w.page.click("button[type=submit]")]);
    watched = w;
    return w;
  }

  it("a canary whose health gate fails halts the rollout; no unit outside the canary receives it; CLI and Chromium show why; abort", async () => {
    await enrolSims();
    const [a] = units as [FleetDaemon, FleetDaemon];
    // A config whose payment service does not answer: the restarted daemons never become healthy.
    const bad = withoutIdentity(a.fullConfig);
    const legacy = (bad.payment as { legacy: Record<string, unknown> }).legacy;
    legacy.baseUrl = "http://127.0.0.1:9";
    (bad.updates as Record<string, unknown>).health = { holdMs: 1000, timeoutMs: 6000, pollMs: 100 };
    const file = bundleFile(bad, 4, ALL());
    const bundleId = await rollout(file, ["--max-failures", "0"]);
    const sha256 = await shaOf(bundleId);
    // Outside the canary: no hint, nothing to fetch.
    for (const s of sims) {
      expect(await s.hint()).toBeNull();
      expect(await s.fetchStatus()).toBe(404);
    }
    // The canary takes it through the hint, fails its health gate, rolls back; the rollout halts by itself.
    await expect
      .poll(async () => (await fleetStatus(bundleId)).state, { timeout: 90_000, interval: 1000 })
      .toBe("halted");
    const st = await fleetStatus(bundleId);
    const failed = st.units.filter((u) => u.state === "rolledBack");
    expect(failed.length).toBeGreaterThan(0);
    for (const u of failed) expect(u.reason).toMatch(/health gate|not healthy|payment service unreachable/);
    for (const u of st.units.filter((x) => x.unitId.startsWith("vm-s"))) expect(u.state).toBe("waiting");
    // Still nobody outside the canary is offered it (hint nor GET), and none reported a step of it.
    for (const s of sims) {
      expect(await s.hint()).toBeNull();
      expect(await s.fetchStatus()).toBe(404);
    }
    expect(await stepsOf(sha256, (u) => u.startsWith("vm-s"))).toBe(0);
    // The CLI and the dashboard (Chromium) show each unit with its state and reason.
    const text = await cliStatus(bundleId);
    expect(text).toMatch(/: halted \(phase 0: /);
    expect(text).toMatch(/vm-a\s+0\s+rolledBack\s+\S/);
    expect(text).toMatch(/vm-s01\s+1\s+waiting/);
    expect(text).toMatch(/vm-s20\s+2\s+waiting/);
    const shown = await pageOf(bundleId);
    expect(shown.state).toBe("halted");
    expect(shown.units.get("vm-a")?.state).toBe("rolledBack");
    expect(shown.units.get("vm-a")?.reason).toMatch(/health gate|not healthy|unreachable/);
    expect(shown.units.get("vm-s07")?.state).toBe("waiting");
    expect(shown.counts.waiting).toBe(20);
    await shot(shown.page, ARTIFACTS, "halted");
    // Abort from the dashboard: the rollout is over; the units are back on the config before it and sell.
    await Promise.all([
      shown.page.waitForURL(`${fleet.url}/rollouts/${bundleId}`),
      shown.page.click("button[value=abort]"),
    ]);
    expect(await shown.page.textContent("#rollout-state")).toBe("aborted");
    for (const s of sims) expect(await s.hint()).toBeNull();
    for (const u of units) {
      await waitUntil(() => u.unit.inService, 60_000);
      expect((await u.origins()).get("payment.legacy.baseUrl")?.value).toBe(emu.info.legacy.baseUrl);
      await u.expectSale(6, 120);
    }
    expect(watched?.problems ?? []).toEqual([]);
  }, 240_000);
});
