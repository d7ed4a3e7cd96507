/**
 * `vendd demo --fleet --vends N --json` (built CLI): three demo units vend through the emulator and report
 * through their outbox to the demo's fleet server; the summary says every event arrived and the fleet's sales
 * equal the journals'. The password goes to --fleet-password-file (mode 0600), never to the output.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openFleetDb } from "../../src/fleet/database.js";
import { vendd } from "../support/cli.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-demo-fleet-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("vendd demo --fleet", () => {
  it("--vends 2 --json: three units, every event on the fleet, sales equal the journals", async () => {
    const db = join(dir, "fleet.db");
    const pw = join(dir, "password");
    const r = await vendd(
      [
        "demo",
        "--fleet",
        "--vends",
        "2",
        "--json",
        "--seed",
        "11",
        "--fleet-db",
        db,
        "--fleet-password-file",
        pw,
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
    expect(summary).toMatchObject({ units: 3, vends: 6, consistent: true });
    expect(summary.fleetSalesTotal).toBe(summary.journalsTotal);
    // Per unit: version, service and two sessions at least.
    expect(Number(summary.fleetEvents)).toBeGreaterThanOrEqual(12);
    const password = readFileSync(pw, "utf8").trim();
    expect(statSync(pw).mode & 0o777).toBe(0o600);
    expect(r.stdout + r.stderr).not.toContain(password);
    expect(r.stderr).toMatch(/fleet dashboard: http:\/\/127\.0\.0\.1:\d+\//);

    const fdb = await openFleetDb(db);
    try {
      const units = await fdb.db
        .selectFrom("units")
        .select(["id", "status", "committed_seq"])
        .orderBy("id")
        .execute();
      expect(units.map((u) => [u.id, u.status])).toEqual([
        ["demo-1", "approved"],
        ["demo-2", "approved"],
        ["demo-3", "approved"],
      ]);
      const sales = await fdb.db.selectFrom("sales").select("unit_id").execute();
      expect(sales).toHaveLength(6);
      const users = await fdb.db.selectFrom("users").select(["username", "role"]).execute();
      expect(users).toEqual([{ username: "manager", role: "manager" }]);
    } finally {
      await fdb.close();
    }
  }, 70_000);

  it("refuses the single-unit options with --fleet", async () => {
    const r = await vendd(["demo", "--fleet", "--chaos", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--chaos is not used with --fleet");
  });
});
