/**
 * Issue 30 acceptance: the nightly job, run every night of a generated month (Europe/Copenhagen, across its
 * DST change on 2026-10-25), raises no false difference although a third of the sales are refunded 0 to 4
 * days later, some between midnight and the 04:30 run. The unit side is a real journal whose outbox events
 * reach the fleet through its ingest; the service's side is the emulator's ledger read back through its
 * reporting interface, transfers and transfer contents included.
 */
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentRefreshToken, emulatorEndpoints } from "../../scripts/reconcileDay.js";
import { ManualClock } from "../../src/core/clock.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { ingestBatch } from "../../src/fleet/ingest/store.js";
import { problems } from "../../src/fleet/reconcile/match.js";
import { startNightlyReconcile } from "../../src/fleet/reconcile/nightly.js";
import { dayStart, nextDay } from "../../src/fleet/reconcile/run.js";
import type { ReportingSettings } from "../../src/fleet/reconcile/settings.js";
import { openSqliteJournal, type SqliteJournal } from "../../src/journal/sqlite.js";
import { journalSale } from "../support/journalSales.js";
import { seeded } from "../support/reconDays.js";

const ZONE = "Europe/Copenhagen";
const FIRST = "2026-10-10";
const DAYS = 30;
const UNIT = "m1";

describe("the nightly job over a generated month with later-day refunds", () => {
  let emu: Emulator;
  let fleet: FleetDb;
  let j: SqliteJournal;

  beforeAll(async () => {
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse("2026-10-09T00:00:00Z") });
    fleet = await openFleetDb(":memory:");
    await fleet.db
      .insertInto("units")
      .values({
        id: UNIT,
        public_key: "k",
        fingerprint: "f",
        label: UNIT,
        status: "approved",
        enrolled_at: 0,
      })
      .execute();
  });
  afterAll(async () => {
    j?.close();
    await fleet?.close();
    await emu?.close();
  });

  it("30 nights, 180 sales, 60 refunds on later days: every run reconciles", async () => {
    const rnd = seeded(2026);
    const clock = new ManualClock(Date.parse("2026-10-09T00:00:00Z"));
    j = openSqliteJournal({
      path: ":memory:",
      unitId: UNIT,
      clock,
      currency: "DKK",
      outbox: { currency: "DKK" },
    });
    const scope = {
      interface: "v10" as const,
      merchant: emu.info.v10.merchantVat,
      point: emu.info.v10.storeId,
    };
    type Ev = { at: number; act: () => void } | { at: number; night: string };
    const evs: Ev[] = [];
    let day = FIRST;
    let n = 0;
    let refunds = 0;
    for (let d = 0; d < DAYS; d++) {
      const start = dayStart(day, ZONE);
      const length = dayStart(nextDay(day), ZONE) - start;
      for (let k = 0; k < 6; k++) {
        const at = start + Math.floor(rnd() * (length - 120_000));
        const id = `s${n++}`;
        const price = 500 + Math.floor(rnd() * 3000);
        let orderId = "";
        evs.push({
          at,
          act: () => {
            orderId = journalSale(j, { id, item: 1, price, driver: "v10", paymentId: "order" });
            emu.recordLedger({
              ...scope,
              id: `${orderId}-p`,
              paymentId: null,
              orderId,
              kind: "captured",
              amount: price,
            });
          },
        });
        if (k % 3 === 0) {
          refunds++;
          // 0 to 4 days later, at any hour (also between midnight and the 04:30 run).
          const later = at + 60_000 + Math.floor(rnd() * 4.5 * 86_400_000);
          const amount = 100 + Math.floor(rnd() * (price - 100));
          evs.push({
            at: later,
            act: () => {
              const r = j.recordIntent({ sessionId: id, op: "refund", orderId, paymentId: orderId, amount });
              j.completeIntent(r.id, "done", "");
              emu.recordLedger({
                ...scope,
                id: `${orderId}-r`,
                paymentId: `${orderId}-p`,
                orderId,
                kind: "refunded",
                amount,
              });
            },
          });
        }
      }
      day = nextDay(day);
      // The night after `day - 1`: 04:30 local on `day`.
      evs.push({ at: dayStart(day, ZONE) + 4.5 * 3600_000, night: day });
    }
    evs.sort((a, b) => a.at - b.at);

    let refreshToken = "";
    const settings: ReportingSettings = {
      credentials: {
        ...emulatorEndpoints(emu),
        clientId: emu.info.reporting.clientId,
        clientSecret: emu.info.reporting.clientSecret,
        get refreshToken() {
          return refreshToken;
        },
      },
      timeZone: null,
      paymentPoints: null,
      points: new Map(),
      persistable: true,
      saveRefreshToken: (t) => {
        refreshToken = t;
      },
    };
    const fleetClock = new ManualClock(emu.clock.now());
    const ctx: FleetContext = {
      db: fleet.db,
      dialect: fleet.dialect,
      clock: fleetClock,
      logger: pino({ level: "silent" }),
      timeZone: ZONE,
    };
    const job = startNightlyReconcile(ctx, { settings });
    const deliver = async () => {
      const pending = j.outboxPending(500);
      if (pending.length === 0) return;
      const r = await ingestBatch(ctx, UNIT, pending);
      j.markDelivered(r.committed);
    };
    const results: { night: string; bad: string[]; matched: number; refunds: number }[] = [];
    try {
      for (const e of evs) {
        if (e.at > emu.clock.now()) emu.clock.advance(e.at - emu.clock.now());
        if (e.at > clock.now()) clock.advance(e.at - clock.now());
        if (e.at > fleetClock.now()) fleetClock.advance(e.at - fleetClock.now());
        if ("act" in e) {
          e.act();
          await deliver();
          continue;
        }
        if (refreshToken === "") refreshToken = await consentRefreshToken(emu);
        const run = await job.runNow();
        if ("error" in run) throw new Error(run.error);
        results.push({
          night: e.night,
          bad: problems(run.result).map((l) => `${l.class} ${l.session_id} ${l.reason}`),
          matched: run.result.counts.matched,
          refunds: run.result.counts.refundMatched,
        });
      }
    } finally {
      job.stop();
    }
    expect(results).toHaveLength(DAYS);
    expect(results.filter((r) => r.bad.length > 0)).toEqual([]);
    expect(results.reduce((s, r) => s + r.matched, 0)).toBe(6 * DAYS);
    // Every refund made before the last night's range ended was compared on its own day.
    expect(results.reduce((s, r) => s + r.refunds, 0)).toBeGreaterThan(refunds / 2);
  }, 120_000);
});
