/**
 * A seeded fleet database and a Fastify app with the dashboard registered, for the dashboard's security
 * tests and its browser test. The seed puts HTML and SQL metacharacters in every text a unit or a manager
 * controls (unit ids, labels, reasons, bundle ids, fault data, session ids) and a formula in a unit id.
 */
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import { ManualClock } from "../../src/core/clock.js";
import { addDays, dayOf, type FleetContext } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { registerFleetDashboard } from "../../src/fleet/features.js";
import { addUser } from "../../src/fleet/web/accounts.js";
import type { DashboardOptions } from "../../src/fleet/web/index.js";

export const NOW = Date.parse("2026-11-25T12:00:00Z");
export const TZ = "Europe/Oslo";
export const XSS = "<script>alert(1)</script>";
export const XSS_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;";
export const IMG = "<img src=x onerror=alert(2)>";
export const SQLI = "x'; DROP TABLE sales;--";
export const FORMULA_UNIT = '=HYPERLINK("http://evil.example","x")';
export const UNITS = {
  lobby: "u-lobby",
  evil: `u-${XSS}`,
  sqli: SQLI,
  formula: FORMULA_UNIT,
  pending: `pending-${IMG}`,
} as const;
export const MANAGER = { username: "mia", password: "manager-password-1" };
export const VIEWER = { username: "vic", password: "viewer-password-1" };

export interface Fleet {
  app: FastifyInstance;
  ctx: FleetContext;
  clock: ManualClock;
  db: FleetDb;
  close(): Promise<void>;
}

export async function seed(ctx: FleetContext): Promise<void> {
  const now = ctx.clock.now();
  const db = ctx.db;
  const unit = (
    id: string,
    label: string,
    status: "pending" | "approved" | "revoked",
    lastSeen: number | null,
    extra: { unresolved?: number; backlog?: number } = {},
  ) => ({
    id,
    public_key: `pk-${id}`,
    fingerprint: `fp:${id.slice(0, 12)}`,
    label,
    status,
    enrolled_at: now - 40 * 86_400_000,
    decided_by: status === "pending" ? null : MANAGER.username,
    decided_at: status === "pending" ? null : now - 39 * 86_400_000,
    committed_seq: 100,
    last_seen_at: lastSeen,
    last_heartbeat:
      lastSeen === null ? null : JSON.stringify({ state: "idle", note: XSS, vmcLink: "up", journal: "ok" }),
    config_version: "7",
    release_version: `1.4.0${status === "approved" && id !== UNITS.lobby ? IMG : ""}`,
    backlog_events: extra.backlog ?? 0,
    backlog_oldest_at: extra.backlog === undefined ? null : now - 3_600_000,
    unresolved: extra.unresolved ?? 0,
  });
  await db
    .insertInto("units")
    .values([
      unit(UNITS.lobby, "Lobby, 1st floor", "approved", now - 30_000),
      unit(UNITS.evil, `Label ${XSS}`, "approved", now - 3_600_000, { unresolved: 2, backlog: 150 }),
      unit(UNITS.sqli, `Label ${SQLI}`, "approved", now - 45_000),
      unit(UNITS.formula, "Formula unit", "approved", now - 20_000),
      unit(UNITS.pending, `Pending ${IMG}`, "pending", null),
    ])
    .execute();
  const sales = [];
  let seq = 0;
  for (let d = 0; d < 20; d++) {
    for (const [u, n] of [
      [UNITS.lobby, 3],
      [UNITS.evil, 1],
      [UNITS.sqli, 1],
      [UNITS.formula, 1],
    ] as const) {
      for (let i = 0; i < n; i++) {
        seq++;
        const closed = now - d * 86_400_000 - i * 60_000 - 60_000;
        const failed = u === UNITS.evil && d === 0;
        sales.push({
          unit_id: u,
          seq,
          session_id: `s-${seq}${u === UNITS.evil ? XSS : ""}`,
          order_id: `o-${seq}${u === UNITS.sqli ? SQLI : ""}`,
          payment_id: `p-${seq}`,
          driver: "sim" as const,
          flow: "selection" as const,
          item: 10 + (seq % 3),
          price: 2500,
          result: failed ? ("cancelled" as const) : ("captured" as const),
          approved: 2500,
          captured: failed ? 0 : 2500,
          refunded: d === 1 && i === 0 && u === UNITS.lobby ? 2500 : 0,
          currency: u === UNITS.formula ? "EUR" : "DKK",
          vends_ok: failed ? 0 : 1,
          vends_failed: failed ? 1 : 0,
          opened_at: closed - 30_000,
          closed_at: closed,
          day: dayOf(closed, ctx.timeZone),
        });
      }
    }
  }
  await db.insertInto("sales").values(sales).execute();
  await db
    .insertInto("events")
    .values([
      {
        unit_id: UNITS.evil,
        seq: 1,
        at: now - 7_200_000,
        kind: "fault",
        data: JSON.stringify({ code: "vmc", message: `jam ${XSS}` }),
        received_at: now - 7_100_000,
      },
      {
        unit_id: UNITS.lobby,
        seq: 2,
        at: now - 86_400_000,
        kind: "version",
        data: JSON.stringify({ config: "7", release: "1.4.0" }),
        received_at: now - 86_400_000,
      },
    ])
    .execute();
  const bundleId = `cfg-7${XSS}`;
  await db
    .insertInto("bundles")
    .values({
      id: bundleId,
      kind: "config",
      version: "7",
      targets: JSON.stringify(["*"]),
      expires_at: null,
      sha256: "ab".repeat(32),
      size: 1234,
      bytes: new Uint8Array([1, 2, 3]),
      uploaded_by: MANAGER.username,
      uploaded_at: now - 2 * 86_400_000,
    })
    .execute();
  await db
    .insertInto("rollouts")
    .values([
      {
        bundle_id: bundleId,
        unit_id: UNITS.lobby,
        state: "applied",
        reason: "",
        updated_at: now - 86_400_000,
      },
      {
        bundle_id: bundleId,
        unit_id: UNITS.evil,
        state: "rolledBack",
        reason: `health gate failed ${IMG}`,
        updated_at: now - 86_000_000,
      },
      {
        bundle_id: bundleId,
        unit_id: UNITS.sqli,
        state: "pending",
        reason: SQLI,
        updated_at: now - 80_000_000,
      },
    ])
    .execute();
  await addUser(db, MANAGER.username, MANAGER.password, "manager", now);
  await addUser(db, VIEWER.username, VIEWER.password, "viewer", now);
}

/** The seed's first sales day and today, in the fleet's time zone. */
export function seededRange(): { from: string; to: string } {
  const to = dayOf(NOW, TZ);
  return { from: addDays(to, -19), to };
}

/** The fleet database at `target` (migrated) and its context: silent logger, the seed's time zone. */
export async function openTestFleet(
  target: string,
  clock: ManualClock,
): Promise<{ db: FleetDb; ctx: FleetContext }> {
  const db = await openFleetDb(target);
  const ctx: FleetContext = {
    db: db.db,
    dialect: db.dialect,
    clock,
    logger: pino({ level: "silent" }),
    timeZone: TZ,
  };
  return { db, ctx };
}

export async function startFleet(
  target = ":memory:",
  opts: DashboardOptions & { seed?: boolean; clock?: ManualClock } = {},
): Promise<Fleet> {
  const clock = opts.clock ?? new ManualClock(NOW);
  const { db, ctx } = await openTestFleet(target, clock);
  if (opts.seed !== false) await seed(ctx);
  const app = Fastify({ logger: false });
  await registerFleetDashboard(app, ctx, { secureCookies: opts.secureCookies ?? false });
  await app.ready();
  return {
    app,
    ctx,
    clock,
    db,
    close: async () => {
      await app.close();
      await db.close();
    },
  };
}
