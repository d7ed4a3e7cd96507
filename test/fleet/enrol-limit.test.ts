/**
 * The cap on enrolments waiting for approval (units/routes.ts `maxPendingEnrolments`), on SQLite and on a real
 * PostgreSQL that the file starts: past the cap a new key's enrolment is refused with 429 and writes nothing
 * (no unit row), a key already pending still gets its status, and approving or revoking makes room again.
 */
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { approveUnit, revokeUnit } from "../../src/fleet/units/index.js";
import { type SimUnit, send, simUnit } from "../support/fleet.js";
import { unitApiOn } from "../support/fleetUnitApi.js";

const T0 = Date.parse("2026-11-27T12:00:00Z");

describe.each(["sqlite", "postgres"] as const)("pending enrolments on %s", (dialect) => {
  let clock: ManualClock;
  let ctx: FleetContext;
  let app: FastifyInstance;
  unitApiOn(dialect, { dbPrefix: "enrol", now: T0, app: { maxPendingEnrolments: 2 } }, (s) => {
    ({ clock, ctx, app } = s);
  });

  const enrol = (u: SimUnit) =>
    send(app, u.key, "POST", "/enroll", { unitId: u.id, label: "site" }, clock.now());
  const unitIds = async () =>
    (await ctx.db.selectFrom("units").select(["id", "status"]).orderBy("id").execute()).map(
      (r) => `${r.id}:${r.status}`,
    );

  it("refuses a new key past the cap and stores nothing; approving or revoking makes room", async () => {
    const [a, b, c, d] = ["vm-a", "vm-b", "vm-c", "vm-d"].map(simUnit) as [
      SimUnit,
      SimUnit,
      SimUnit,
      SimUnit,
    ];
    expect((await enrol(a)).status).toBe(202);
    expect((await enrol(b)).status).toBe(202);

    const refused = await enrol(c);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ error: { code: "too_many_pending" } });
    expect(await unitIds()).toEqual(["vm-a:pending", "vm-b:pending"]);

    // A key that is already pending is answered as before: its status, not the cap.
    expect(await enrol(a)).toMatchObject({ status: 202, json: { status: "pending" } });

    expect(await approveUnit(ctx, "vm-a", "manager")).toBe("done");
    expect((await enrol(c)).status).toBe(202);
    expect((await enrol(d)).status).toBe(429);
    expect(await revokeUnit(ctx, "vm-b", "manager")).toBe("done");
    expect((await enrol(d)).status).toBe(202);
    expect(await unitIds()).toEqual(["vm-a:approved", "vm-b:revoked", "vm-c:pending", "vm-d:pending"]);
  });
});
