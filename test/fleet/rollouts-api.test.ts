/**
 * Issue 41: rollouts on the signed unit API, 20 simulated units, on SQLite and on a real PostgreSQL: a
 * canary whose health gate fails halts the rollout by itself and no unit outside the canary is offered
 * the bundle (heartbeat hint nor GET /bundle); pause holds every unit, resume goes on; abort stops it;
 * a successful canary releases the next wave; a step reported twice is stored once; groups target units.
 */
import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/core/clock.js";
import { storeBundle } from "../../src/fleet/bundles/store.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { addToGroup } from "../../src/fleet/groups/index.js";
import {
  changeRollout,
  createRollout,
  rolloutStatus,
  updateUnitNow,
} from "../../src/fleet/rollouts/index.js";
import { createBundle } from "../../src/update/bundle.js";
import { makeKey, signWith, type TestKey } from "../../src/update/update.test-support.js";
import { type SimUnit, send } from "../support/fleet.js";
import { heartbeat, unitApiOn } from "../support/fleetUnitApi.js";

let signer: TestKey;
beforeAll(async () => {
  signer = await makeKey("rollouts");
}, 30_000);

describe.each(["sqlite", "postgres"] as const)("rollouts on %s", (dialect) => {
  let clock: ManualClock;
  let ctx: FleetContext;
  let app: FastifyInstance;
  const { post, approved } = unitApiOn(dialect, { dbPrefix: "rollouts" }, (s) => {
    ({ clock, ctx, app } = s);
  });

  async function twenty(): Promise<SimUnit[]> {
    const units: SimUnit[] = [];
    for (let i = 1; i <= 20; i++) units.push(await approved(`vm-${String(i).padStart(2, "0")}`));
    return units;
  }

  const ALL = Array.from({ length: 20 }, (_, i) => `vm-${String(i + 1).padStart(2, "0")}`);
  async function upload(version: number, targets = ALL): Promise<{ id: string; sha256: string }> {
    const { bundle } = createBundle({
      configText: "unit: {id: any}\n",
      release: null,
      version,
      targets,
      expires: "2031-01-01",
    });
    const bytes = signWith(bundle, [signer]);
    const s = await storeBundle(ctx, bytes, "ann", []);
    return { id: s.id, sha256: createHash("sha256").update(bytes).digest("hex") };
  }

  const hint = async (u: SimUnit) =>
    ((await post(u, "/heartbeat", heartbeat(u.id))).json as { bundleEtag: string | null }).bundleEtag;
  const get = async (u: SimUnit) => (await send(app, u.key, "GET", "/bundle", undefined, clock.now())).status;
  const step = async (u: SimUnit, sha256: string, s: string, reason = "") => {
    const r = await post(u, "/steps", { unitId: u.id, sha256, step: s, reason, at: clock.now() });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return (r.json as { stored: boolean }).stored;
  };
  const stateOf = async (id: string) => {
    const s = await rolloutStatus(ctx, id);
    return {
      plan: s?.state,
      reason: s?.reason,
      units: Object.fromEntries(
        (s?.units ?? []).map((u) => [u.unitId, `${u.state}${u.reason ? `:${u.reason}` : ""}`]),
      ),
    };
  };

  it("a canary whose health gate fails halts the rollout; no unit outside the canary receives the bundle", async () => {
    const units = await twenty();
    const b = await upload(7);
    await createRollout(ctx, {
      bundleId: b.id,
      targets: { all: true, groups: [], units: [] },
      canary: { count: 2 },
      wave: { percent: 50 },
      maxFailurePct: 0,
      by: "ann",
    });
    const etag = `"${b.sha256}"`;
    const [c1, c2, ...rest] = units as [SimUnit, SimUnit, ...SimUnit[]];
    // Only the canary is hinted and served.
    expect(await hint(c1)).toBe(etag);
    expect(await hint(c2)).toBe(etag);
    for (const u of rest) {
      expect(await hint(u)).toBeNull();
      expect(await get(u)).toBe(404);
    }
    expect(await get(c1)).toBe(200);
    expect(await step(c1, b.sha256, "fetched")).toBe(true);
    expect(await step(c1, b.sha256, "fetched")).toBe(false); // twice: stored once
    await step(c1, b.sha256, "verified");
    await step(c1, b.sha256, "applied");
    await step(c1, b.sha256, "rolledBack", "health gate: the payment service did not answer within 120 s");
    const s = await stateOf(b.id);
    expect(s.plan).toBe("halted");
    expect(s.reason).toContain("1 of 2 units of the phase failed");
    expect(s.units["vm-01"]).toBe("rolledBack:health gate: the payment service did not answer within 120 s");
    expect(s.units["vm-03"]).toBe("waiting");
    // Halted: nobody is offered it any more, the canary's other unit neither.
    expect(await hint(c2)).toBeNull();
    expect(await get(c2)).toBe(404);
    for (const u of rest) {
      expect(await hint(u)).toBeNull();
      expect(await get(u)).toBe(404);
    }
    const stored = await ctx.db
      .selectFrom("rollout_steps")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("unit_id", "=", "vm-01")
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(4);
    await expect(changeRollout(ctx, b.id, "resume", "ann")).rejects.toThrow(/halted/);
  }, 120_000);

  it("a good canary releases the next wave; pause holds everyone, resume goes on, abort stops; update-unit now", async () => {
    const units = await twenty();
    const b = await upload(8);
    await createRollout(ctx, {
      bundleId: b.id,
      targets: { all: true, groups: [], units: [] },
      canary: { count: 2 },
      wave: { percent: 50 },
      maxFailurePct: 10,
      by: "ann",
    });
    const etag = `"${b.sha256}"`;
    const byId = new Map(units.map((u) => [u.id, u]));
    const u = (id: string) => byId.get(id) as SimUnit;
    for (const id of ["vm-01", "vm-02"])
      for (const st of ["fetched", "verified", "applied", "healthy", "committed"])
        await step(u(id), b.sha256, st);
    // The canary committed: wave 1 (10 units: vm-03..vm-12) is offered, wave 2 not.
    expect(await hint(u("vm-03"))).toBe(etag);
    expect(await hint(u("vm-12"))).toBe(etag);
    expect(await hint(u("vm-13"))).toBeNull();
    await changeRollout(ctx, b.id, "pause", "ann");
    expect(await hint(u("vm-03"))).toBeNull();
    expect(await get(u("vm-03"))).toBe(404);
    await changeRollout(ctx, b.id, "resume", "ann");
    expect(await hint(u("vm-03"))).toBe(etag);
    // "Update this unit now": a unit of the last wave.
    await updateUnitNow(ctx, b.id, "vm-20");
    expect(await hint(u("vm-20"))).toBe(etag);
    await changeRollout(ctx, b.id, "abort", "ann");
    for (const id of ["vm-03", "vm-12", "vm-13", "vm-20"]) {
      expect(await hint(u(id))).toBeNull();
      expect(await get(u(id))).toBe(404);
    }
    const s = await stateOf(b.id);
    expect(s.plan).toBe("aborted");
    expect(s.units["vm-01"]).toBe("applied");
  }, 120_000);

  it("groups target a rollout; units outside them are not in it", async () => {
    await twenty();
    await addToGroup(ctx.db, "lobby", ["vm-05", "vm-06", "vm-07"]);
    const b = await upload(9);
    const made = await createRollout(ctx, {
      bundleId: b.id,
      targets: { all: false, groups: ["lobby"], units: ["vm-09"] },
      canary: { count: 1 },
      wave: { count: 5 },
      maxFailurePct: 0,
      by: "ann",
    });
    expect(made).toEqual({ bundleId: b.id, units: 4, phases: 2 });
    expect(Object.keys((await stateOf(b.id)).units)).toEqual(["vm-05", "vm-06", "vm-07", "vm-09"]);
  }, 120_000);
});
