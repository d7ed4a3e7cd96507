/**
 * Builds large journals for the start-up benches quickly: a few real sessions made by the engine (sim
 * payment driver and sim VMC on a ManualClock, so every row is what the engine writes), then copied in bulk
 * by SQL inside one transaction until the journal holds the number of sessions asked for. The copies get
 * unique session ids, order ids and idempotency keys; integer row ids are new. Every copied session is
 * closed (the templates are finished vends), so the journal has nothing to recover.
 */
import Database from "better-sqlite3";
import pino from "pino";
import { createSimDisplay } from "../drivers/display/sim.js";
import { SimVmc } from "../drivers/vmc/sim.js";
import { ManualClock } from "../src/core/clock.js";
import { DAY_MS } from "../src/core/days.js";
import { createEngine } from "../src/engine/factory.js";
import type { EngineOptions } from "../src/engine/options.js";
import { openSqliteJournal } from "../src/journal/sqlite.js";
import { SimPaymentDriver } from "../src/payment/sim.js";

export const BENCH_ENGINE: EngineOptions = {
  currency: "DKK",
  scheme: "servicepos",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
  paymentMode: "reservation",
  captureType: "full",
};

/** Real vends by the engine into the journal at `path` (created), one every `spacingMs` of virtual time. */
export async function engineVends(
  path: string,
  unitId: string,
  vends: number,
  startAt: number,
): Promise<void> {
  const clock = new ManualClock(startAt);
  const journal = openSqliteJournal({ path, unitId, clock });
  const payment = new SimPaymentDriver({
    clock,
    pollDelayMs: 200,
    customer: () => ({ action: "accept", afterMs: 0 }),
  });
  const vmc = new SimVmc({
    clock,
    dispenseMs: 0,
    outcome: (v) => (v.price % 10 === 0 ? "failure" : "success"),
  });
  const engine = createEngine(BENCH_ENGINE, {
    payment,
    vmc,
    display: createSimDisplay(),
    journal,
    clock,
    logger: pino({ level: "silent" }),
  });
  try {
    await engine.start();
    for (let i = 0; i < vends; i++) {
      let finished = false;
      const off = engine.onSessionFinished(() => {
        finished = true;
      });
      if (!vmc.requestVend(1 + (i % 9), 100 + (i % 50))) throw new Error(`vend ${i} refused by the sim VMC`);
      for (let step = 0; !finished && step < 100; step++) await clock.advanceAsync(200, 200);
      off();
      if (!finished) throw new Error(`vend ${i} did not finish in 20 s of virtual time`);
      clock.advance(60_000);
    }
  } finally {
    await engine.stop();
    journal.close();
  }
}

/** Columns of `table`, in order. */
function columns(db: Database.Database, table: string): string[] {
  const rows = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
  return rows.map((r) => r.name);
}

/** The SQL expression that copies `col` of `table` as copy number `:k`. */
function copyExpr(table: string, col: string): string {
  if (table === "sessions" && col === "id") return "id || '~' || :k";
  if (col === "id") return "NULL";
  if (col === "session_id" || col === "order_id" || col === "idempotency_key") return `${col} || '~' || :k`;
  return col;
}

/**
 * Makes the journal at `path` hold `sessions` closed sessions: `templates` real vends (a divisor of
 * `sessions`), then copies. The journal is closed afterwards (checkpointed), ready for a daemon to open.
 */
export async function buildJournal(path: string, sessions: number, templates = 100): Promise<void> {
  if (sessions % templates !== 0) throw new Error(`${sessions} sessions is not a multiple of ${templates}`);
  await engineVends(path, "bench", templates, Date.now() - DAY_MS);
  const db = new Database(path);
  try {
    db.exec("CREATE TEMP TABLE template AS SELECT id FROM sessions");
    const tables = ["sessions", "intents", "vends", "events"].filter(
      (t) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t) !== undefined,
    );
    const statements = tables.map((t) => {
      const cols = columns(db, t);
      const key = t === "sessions" ? "id" : "session_id";
      return db.prepare(
        `INSERT INTO ${t} (${cols.join(", ")}) SELECT ${cols.map((c) => copyExpr(t, c)).join(", ")} FROM ${t} WHERE ${key} IN (SELECT id FROM temp.template)`,
      );
    });
    db.transaction(() => {
      for (let k = 1; k < sessions / templates; k++) for (const s of statements) s.run({ k });
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

/** Sessions in the journal at `path`. */
export function sessionCount(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return Number((db.prepare("SELECT count(*) AS n FROM sessions").get() as { n: number }).n);
  } finally {
    db.close();
  }
}
