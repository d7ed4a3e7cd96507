/**
 * Issue 37 acceptance: each alert rule opens an alert from real unit traffic (signed unit API requests),
 * sends exactly one mail (real SMTP server, STARTTLS, authenticated) and one signed webhook (a real
 * receiver verifying the signature), re-notifies once after 30 minutes, resolves after the 10-minute
 * hold-off and sends the resolution once, then stays quiet. SQLite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { alertsDb } from "../../src/fleet/alerts/index.js";
import { alertBench, sale } from "../support/alertBench.js";
import type { SimUnit } from "../support/fleet.js";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

type Bench = ReturnType<typeof alertBench>;
interface Case {
  rule: string;
  /** Units beating while the condition holds (default: the unit). */
  silentWhileOpen?: boolean;
  cause(b: Bench, u: SimUnit): Promise<void>;
  clear(b: Bench, u: SimUnit): Promise<void>;
}

async function recon(b: Bench, unitId: string, clean: boolean): Promise<void> {
  const db = b.state().ctx.db;
  const run = await db
    .insertInto("recon_runs")
    .values({
      run_at: b.now(),
      from_day: "2026-11-24",
      to_day: "2026-11-24",
      clean: clean ? 1 : 0,
      summary: "{}",
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db
    .insertInto("recon_lines")
    .values({
      run_id: run.id,
      day: "2026-11-24",
      class: clean ? "matched" : "missingInReport",
      unit_id: unitId,
      session_id: "s1",
      order_id: "o-s1",
      reference: null,
      expected: 250,
      reported: clean ? 250 : null,
      reason: clean ? "" : "captured in the journal, not in the report",
    })
    .execute();
}

async function entitlementList(b: Bench, serial: number, validFor: number): Promise<void> {
  await b
    .state()
    .ctx.db.insertInto("plan_entitlements")
    .values({
      serial,
      document: "{}",
      signature: "sig",
      etag: `e${serial}`,
      content: `c${serial}`,
      issued_at: b.now(),
      valid_until: b.now() + validFor,
    })
    .execute();
}

const version = (b: Bench, outcome: "applied" | "rolledBack") => ({
  at: b.now(),
  kind: "version" as const,
  data: {
    kind: "config" as const,
    bundleId: "cfg-9",
    version: "9",
    outcome,
    reason: outcome === "applied" ? "" : "health check failed",
  },
});

const CASES: Case[] = [
  { rule: "offline", silentWhileOpen: true, cause: async () => undefined, clear: async () => undefined },
  {
    rule: "silent",
    async cause(b, u) {
      const now = b.now();
      for (const w of [1, 2])
        await b.report(
          u,
          [0, 1, 2].map((i) => sale(now - w * 7 * DAY - (20 + i) * MIN, `w${w}-${i}`)),
        );
    },
    clear: async (b, u) => b.report(u, [sale(b.now(), "now-1")]),
  },
  {
    rule: "vendFailures",
    async cause(b, u) {
      const outcomes = (i: number): ("success" | "failure")[] => [i < 4 ? "failure" : "success"];
      await b.report(
        u,
        Array.from({ length: 10 }, (_, i) => sale(b.now() - (10 - i) * 1000, `f${i}`, outcomes(i))),
      );
    },
    clear: async (b, u) =>
      b.report(
        u,
        Array.from({ length: 10 }, (_, i) => sale(b.now() - (10 - i) * 1000, `ok${i}`)),
      ),
  },
  {
    rule: "stuckMoney",
    cause: async (b, u) => b.setHeartbeat(u, { unresolved: 1 }),
    clear: async (b, u) => b.setHeartbeat(u, { unresolved: 0 }),
  },
  {
    rule: "review",
    cause: async (b, u) => b.report(u, [sale(b.now(), "conflict-1", ["success"], { review: true })]),
    clear: async () => undefined, // flagged sessions count for 45 minutes (review.hours 0.75)
  },
  {
    rule: "backlog",
    cause: async (b, u) =>
      b.setHeartbeat(u, { backlog: { events: 600, oldestAt: b.now() - MIN, lastSeq: 600 } }),
    clear: async (b, u) => b.setHeartbeat(u, { backlog: { events: 0, oldestAt: null, lastSeq: 600 } }),
  },
  { rule: "reconciliation", cause: (b, u) => recon(b, u.id, false), clear: (b, u) => recon(b, u.id, true) },
  {
    rule: "entitlements",
    cause: (b) => entitlementList(b, 1, 2 * 60 * MIN),
    clear: (b) => entitlementList(b, 2, 7 * DAY),
  },
  {
    rule: "rollout",
    async cause(b, u) {
      await b
        .state()
        .ctx.db.insertInto("bundles")
        .values({
          id: "cfg-9",
          kind: "config",
          version: "9",
          targets: '["*"]',
          expires_at: null,
          sha256: "00",
          size: 1,
          bytes: new Uint8Array([1]),
          uploaded_by: "ann",
          uploaded_at: b.now(),
        })
        .execute();
      await b.report(u, [version(b, "rolledBack")]);
    },
    clear: (b, u) => b.report(u, [version(b, "applied")]),
  },
];

describe.each(["sqlite", "postgres"] as const)("alert rules on %s", (dialect) => {
  const b = alertBench(dialect);

  it.each(CASES)(
    "$rule: opened once, re-notified on schedule, resolved once after the hold-off",
    async (c) => {
      const u = await b.unit("vm-1", "Lobby");
      await b.step(3, [u]); // past the start-up grace, everything quiet
      expect(b.hooks()).toEqual([]);
      await c.cause(b, u);
      const beating = c.silentWhileOpen === true ? [] : [u];
      let waited = 0;
      while (b.hooks().length === 0 && waited < 10) {
        await b.step(1, beating);
        waited++;
      }
      expect(waited).toBeLessThanOrEqual(c.rule === "offline" ? 6 : 1);
      const [opened] = b.hooks();
      expect(b.hooks()).toHaveLength(1);
      expect(opened).toMatchObject({ type: "alert.opened", valid: true, duplicate: false });
      const alert = opened?.body.alert as Record<string, unknown>;
      expect(alert.rule).toBe(c.rule);
      expect(alert.unitId).toBe(c.rule === "entitlements" ? "*" : "vm-1");
      expect(b.mails()).toHaveLength(1);
      expect(b.mails()[0]?.changeIds).toEqual([opened?.id]);
      expect(b.mails()[0]?.secure).toBe(true);
      expect(b.mails()[0]?.user).toBe("alerts");

      await b.step(29, beating);
      expect(b.hooks()).toHaveLength(1);
      await b.step(1, beating);
      expect(b.hooks().map((h) => h.type)).toEqual(["alert.opened", "alert.renotified"]);
      expect(b.mails()).toHaveLength(2);

      await c.clear(b, u);
      const clearedAt = b.now();
      let resolvedAfter = 0;
      while (b.hooks().length === 2 && resolvedAfter < 90) {
        await b.step(1, [u]);
        resolvedAfter++;
      }
      expect(b.hooks().map((h) => h.type)).toEqual(["alert.opened", "alert.renotified", "alert.resolved"]);
      expect(b.now() - clearedAt).toBeGreaterThanOrEqual(10 * MIN); // the hold-off
      await b.step(40, [u]);
      expect(b.hooks()).toHaveLength(3);
      expect(b.mails()).toHaveLength(3);
      const ids = b.hooks().map((h) => h.id);
      expect(new Set(ids).size).toBe(3);
      expect(b.mails().map((m) => m.changeIds[0])).toEqual(ids);
      expect(b.hooks().every((h) => h.valid && !h.duplicate)).toBe(true);
      const rows = await alertsDb(b.state().ctx).selectFrom("alerts").selectAll().execute();
      expect(rows.map((r) => [r.rule, r.state])).toEqual([[c.rule, "resolved"]]);
    },
    120_000,
  );

  it("a unit that said it was stopping is stopped, not offline", async () => {
    const u = await b.unit("vm-2");
    await b.step(2, [u]);
    b.setHeartbeat(u, { state: "stopping" });
    await b.step(1, [u]);
    await b.step(30, []);
    expect(b.hooks()).toEqual([]);
    expect(b.mails()).toEqual([]);
  }, 60_000);
});
