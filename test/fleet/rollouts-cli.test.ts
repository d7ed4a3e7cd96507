/**
 * Issue 41: `vendd fleet group` and `vendd fleet rollout` as processes on a fleet database a running fleet
 * (in this process, the signed unit API) shares: groups, a rollout made from a bundle file to a group, the
 * canary's failed health gate halting it, `status` showing each unit's state and reason (table and JSON),
 * then abort; a bad group name refused with nothing changed.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { createBundle } from "../../src/update/bundle.js";
import { makeKey, signWith } from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";
import { fleetContext, type SimUnit, send, simUnit } from "../support/fleet.js";
import { heartbeat } from "../support/fleetUnitApi.js";

describe("vendd fleet group and rollout (CLI processes)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-rollout-cli-"));
  const db = join(dir, "fleet.db");
  let ctx: FleetContext;
  let fdb: FleetDb;
  let app: Awaited<ReturnType<typeof createFleetApp>>;
  const clock = new ManualClock(Date.now());
  const units: SimUnit[] = [];
  beforeAll(async () => {
    ({ ctx, fdb } = await fleetContext(db, clock));
    app = await createFleetApp(ctx);
    await app.ready();
    for (let i = 1; i <= 20; i++) {
      const u = simUnit(`vm-${String(i).padStart(2, "0")}`);
      expect(
        (await send(app, u.key, "POST", "/enroll", { unitId: u.id, label: "x" }, clock.now())).status,
      ).toBe(202);
      await approveUnit(ctx, u.id, "ann");
      units.push(u);
    }
  }, 60_000);
  afterAll(async () => {
    await app.close();
    await fdb.close();
  });

  it("groups, a canary that fails its health gate halts the rollout, status shows each unit, abort", async () => {
    const bad = await vendd(["fleet", "group", "add", "Lobby!", "vm-01", "--db", db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("lower-case letters");
    const unknown = await vendd(["fleet", "group", "add", "lobby", "vm-99", "--db", db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no unit vm-99 is enrolled");
    const add = await vendd([
      "fleet",
      "group",
      "add",
      "lobby",
      ...units.slice(0, 10).map((u) => u.id),
      "--db",
      db,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const list = await vendd(["fleet", "group", "list", "--db", db, "--json"]);
    expect(JSON.parse(list.stdout).groups[0].units).toHaveLength(10);

    const key = await makeKey("cli");
    const { bundle } = createBundle({
      configText: "unit: {id: any}\n",
      release: null,
      version: 4,
      targets: units.map((u) => u.id),
      expires: "2031-01-01",
    });
    const bytes = signWith(bundle, [key]);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const file = join(dir, "b.vbundle");
    writeFileSync(file, bytes);
    const made = await vendd([
      "fleet",
      "rollout",
      "create",
      "--bundle",
      file,
      "--group",
      "lobby",
      "--canary",
      "2",
      "--wave",
      "50%",
      "--db",
      db,
      "--by",
      "ann",
      "--json",
    ]);
    expect(made.code, made.stderr).toBe(0);
    const {
      bundleId,
      units: n,
      phases,
    } = JSON.parse(made.stdout) as { bundleId: string; units: number; phases: number };
    expect([n, phases]).toEqual([10, 3]);

    // The canary's first unit fails its health gate (steps over the signed unit API).
    const c1 = units[0] as SimUnit;
    const hint = (u: SimUnit) => send(app, u.key, "POST", "/heartbeat", heartbeat(u.id), clock.now());
    expect(((await hint(c1)).json as { bundleEtag: string | null }).bundleEtag).toBe(`"${sha256}"`);
    for (const [step, reason] of [
      ["fetched", ""],
      ["verified", ""],
      ["applied", ""],
      ["rolledBack", "health gate: VMC link down for 60 s"],
    ])
      expect(
        (
          await send(
            app,
            c1.key,
            "POST",
            "/steps",
            { unitId: c1.id, sha256, step, reason, at: clock.now() },
            clock.now(),
          )
        ).status,
      ).toBe(200);

    const status = await vendd(["fleet", "rollout", "status", bundleId, "--db", db]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/: halted \(phase 0: 1 of 2 units of the phase failed/);
    expect(status.stdout).toMatch(/vm-01\s+0\s+rolledBack\s+health gate: VMC link down for 60 s/);
    expect(status.stdout).toMatch(/vm-02\s+0\s+offered/);
    expect(status.stdout).toMatch(/vm-03\s+1\s+waiting/);
    expect(status.stdout).not.toContain("vm-11");
    const json = JSON.parse(
      (await vendd(["fleet", "rollout", "status", bundleId, "--db", db, "--json"])).stdout,
    ) as {
      state: string;
      units: { unitId: string; state: string; reason: string }[];
    };
    expect(json.state).toBe("halted");
    expect(json.units.find((u) => u.unitId === "vm-01")).toMatchObject({
      state: "rolledBack",
      reason: "health gate: VMC link down for 60 s",
    });
    // Nobody outside the canary was offered it.
    for (const u of units.slice(2))
      expect(((await hint(u)).json as { bundleEtag: string | null }).bundleEtag).toBeNull();

    const resume = await vendd(["fleet", "rollout", "resume", bundleId, "--db", db]);
    expect(resume.code).toBe(1);
    expect(resume.stderr).toContain("halted");
    const abort = await vendd(["fleet", "rollout", "abort", bundleId, "--db", db, "--by", "ann"]);
    expect(abort.code, abort.stderr).toBe(0);
    expect(abort.stdout).toContain("aborted");
  }, 120_000);
});
