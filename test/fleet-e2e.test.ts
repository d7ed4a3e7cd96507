/**
 * Unit ↔ fleet end to end, exactly once (issue 16 acceptance), against real `vendd fleet serve` processes
 * (the built CLI): units are real journals with their outbox and the real signed sender (FleetLink over
 * HTTP); sales are written through the journal's own API (the engine's write path: start, vend, capture,
 * close; every seventh sale refunded in part after it closed, which reports the session again).
 *  (a) a unit's sender process SIGKILLed at each sending step (fleet.beforePost/beforeMark/afterMark), then
 *      restarted;
 *  (b) the fleet process SIGKILLed inside a batch's ingest transaction (fleet.ingest.stored) while the units
 *      keep selling, then restarted: on SQLite and on PostgreSQL (a real server in a temporary directory,
 *      scripts/postgresServer.ts; two fleet processes share it, one killed);
 *  (c) the fleet stopped for a while as units sell, then back.
 * Then: every event is on the fleet once, in seq order per unit, the fleet's committed seq is the journal's
 * last, and the fleet's sales (captured − refunded per unit) equal the journal's done intents.
 * Bounded: seeded prices, a few hundred events, short real waits (processes are real).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, postgresBinDir, startPostgres } from "../scripts/postgresServer.js";
import { systemClock } from "../src/core/clock.js";
import { FLEET_FAULT_POINTS } from "../src/core/faults.js";
import { generateUnitKey, signRequest, type UnitKeyPair } from "../src/core/fleetAuth.js";
import { UNIT_API } from "../src/core/fleetWire.js";
import { seededRandom } from "../src/core/random.js";
import { FleetLink } from "../src/daemon/fleetLink.js";
import { openFleetDb } from "../src/fleet/db/open.js";
import { approveUnit } from "../src/fleet/units.js";
import { openSqliteJournal, type SqliteJournal } from "../src/journal/sqlite.js";
import { CLI } from "./cli-support.js";
import { journalSale } from "./support/journalSales.js";
import { runSenderProcess } from "./support/senderProcess.js";

const silent = pino({ level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      s.close(() => done(port));
    });
  });
}

interface FleetProc {
  url: string;
  child: ChildProcess;
  exit: Promise<NodeJS.Signals | number>;
}

/** `vendd fleet serve` on `port`, once it printed that it serves; `faultPoint` arms VENDD_FAULT_POINT. */
async function startFleet(db: string, port: number, faultPoint: string | null = null): Promise<FleetProc> {
  const child = spawn(
    process.execPath,
    [CLI, "fleet", "serve", "--db", db, "--listen", `127.0.0.1:${port}`, "--log-level", "error"],
    { env: { ...process.env, VENDD_FAULT_POINT: faultPoint ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const exit = new Promise<NodeJS.Signals | number>((done) =>
    child.once("exit", (code, signal) => done(signal ?? code ?? -1)),
  );
  let out = "";
  let err = "";
  child.stderr?.on("data", (b: Buffer) => {
    err = (err + b.toString()).slice(-2000);
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not start: ${err}`)), 20_000);
    child.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
      if (out.includes("serving")) {
        clearTimeout(timer);
        ready();
      }
    });
    void exit.then((how) => {
      clearTimeout(timer);
      fail(new Error(`fleet serve exited (${how}): ${err}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, child, exit };
}

async function stopFleet(p: FleetProc, signal: NodeJS.Signals = "SIGTERM"): Promise<NodeJS.Signals | number> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  return p.exit;
}

/** Enrols `key` as `unitId` through the real `/enroll`, then approves it in the fleet's database. */
async function enrol(url: string, db: string, unitId: string, key: UnitKeyPair): Promise<void> {
  const path = `${UNIT_API}/enroll`;
  const body = JSON.stringify({ unitId, label: `e2e ${unitId}` });
  const headers = signRequest(key, "POST", path, body, Date.now());
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    body,
    headers: { ...headers, "content-type": "application/json" },
  });
  expect(res.status).toBe(202);
  const fdb = await openFleetDb(db);
  try {
    const ctx = { db: fdb.db, dialect: fdb.dialect, clock: systemClock, logger: silent, timeZone: "UTC" };
    expect(await approveUnit(ctx, unitId, "e2e")).toBe("done");
  } finally {
    await fdb.close();
  }
}

/** One sale through the journal (the engine's write path); every 7th is refunded in part after it closed. */
function sell(j: SqliteJournal, id: string, price: number, refund: boolean): void {
  const orderId = journalSale(j, { id, item: price % 9, price, driver: "v10" });
  if (refund) {
    const r = j.recordIntent({
      sessionId: id,
      op: "refund",
      orderId,
      paymentId: `pay-${id}`,
      amount: Math.floor(price / 2),
    });
    j.completeIntent(r.id, "done", "refunded");
  }
}

/** Captured minus refunded: the journal's done intents. */
function journalNet(j: SqliteJournal): number {
  let net = 0;
  for (const s of j.sessions())
    for (const i of j.intents(s.id)) {
      if (i.state !== "done") continue;
      if (i.op === "capture") net += i.amount;
      if (i.op === "refund") net -= i.amount;
    }
  return net;
}

/** A unit in this process: its journal file, the real sender over HTTP, and the events it expects. */
class Unit {
  readonly key = generateUnitKey();
  readonly journal: SqliteJournal;
  /** Session id of each outbox event, in seq order (a refund reports its session again). */
  readonly expected: string[] = [];
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;
  private sold = 0;

  constructor(
    readonly id: string,
    dir: string,
    seed: number,
  ) {
    this.journal = openSqliteJournal({
      path: join(dir, `${id}.db`),
      unitId: id,
      clock: systemClock,
      outbox: { currency: "NOK" },
    });
    this.random = seededRandom(seed);
  }

  start(url: string): void {
    const link = new FleetLink({
      url,
      unitId: this.id,
      key: this.key,
      outbox: this.journal,
      clock: systemClock,
      random: this.random,
      logger: silent,
      heartbeat: () => ({
        state: "inService",
        reason: "",
        versions: { vendd: "e2e", config: null, release: null },
        journal: { ok: true, detail: "ok" },
        vmc: "up",
        payment: "up",
        unresolved: 0,
      }),
      heartbeatMs: 60_000,
      batchEvents: 4,
      backlogWarnEvents: 10_000,
      backlogWarnMs: 86_400_000,
      timeoutMs: 3000,
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
      pollMs: 20,
    });
    this.running = link.run(this.stopping.signal);
  }

  sell(): void {
    this.sold++;
    const sid = `${this.id}-s${this.sold}`;
    const refund = this.sold % 7 === 0;
    sell(this.journal, sid, 50 + Math.floor(this.random() * 450), refund);
    this.expected.push(sid);
    if (refund) this.expected.push(sid);
  }

  async drained(ms = 20_000): Promise<void> {
    const until = Date.now() + ms;
    while (this.journal.outboxStats().events > 0 && Date.now() < until) await sleep(20);
    expect(this.journal.outboxStats().events, `${this.id} backlog`).toBe(0);
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error("test done"));
    await this.running;
    this.journal.close();
  }
}

/** Every unit's events on the fleet once, in seq order, and its sales equal to its journal. */
async function verify(
  db: string,
  units: readonly { id: string; journal: SqliteJournal; expected: readonly string[] }[],
): Promise<void> {
  const fdb = await openFleetDb(db);
  try {
    for (const u of units) {
      const s = u.journal.outboxStats();
      expect(s.lastSeq).toBe(u.expected.length);
      const rows = await fdb.db
        .selectFrom("events")
        .select(["seq", "kind", "data"])
        .where("unit_id", "=", u.id)
        .orderBy("seq")
        .execute();
      expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: s.lastSeq }, (_, i) => i + 1));
      expect(rows.map((r) => (JSON.parse(r.data) as { sessionId?: string }).sessionId)).toEqual(u.expected);
      const unit = await fdb.db
        .selectFrom("units")
        .select("committed_seq")
        .where("id", "=", u.id)
        .executeTakeFirstOrThrow();
      expect(Number(unit.committed_seq)).toBe(s.lastSeq);
      const sales = await fdb.db
        .selectFrom("sales")
        .select(["captured", "refunded"])
        .where("unit_id", "=", u.id)
        .execute();
      expect(sales.length).toBe(new Set(u.expected).size);
      const net = sales.reduce((a, r) => a + Number(r.captured) - Number(r.refunded), 0);
      expect(net, `${u.id} sales on the fleet`).toBe(journalNet(u.journal));
    }
  } finally {
    await fdb.close();
  }
}

/** `rounds` rounds of one sale per unit, `gapMs` apart. */
async function selling(units: readonly Unit[], rounds: number, gapMs = 10): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const u of units) u.sell();
    await sleep(gapMs);
  }
}

/**
 * (b): `fleets` processes share `db` (units spread over them); the first is armed to SIGKILL itself inside
 * its third batch's ingest transaction while the units keep selling; it is restarted, selling goes on, then
 * every unit drains and the fleet is checked.
 */
async function killMidBatch(dir: string, db: string, fleets: number, seed: number): Promise<void> {
  const ports = await Promise.all(Array.from({ length: fleets }, () => freePort()));
  const procs: FleetProc[] = [];
  procs.push(await startFleet(db, ports[0] ?? 0, "fleet.ingest.stored@3"));
  for (const port of ports.slice(1)) procs.push(await startFleet(db, port));
  const units = [1, 2, 3].map((n) => new Unit(`kill-${seed}-${n}`, dir, seed * 10 + n));
  try {
    for (const [i, u] of units.entries()) {
      const p = procs[i % procs.length] as FleetProc;
      await enrol(p.url, db, u.id, u.key);
      u.start(p.url);
    }
    const killed = procs[0] as FleetProc;
    const selling1 = selling(units, 40, 15);
    expect(await Promise.race([killed.exit, sleep(15_000).then(() => "timeout")])).toBe("SIGKILL");
    await selling1;
    await selling(units, 10); // the killed fleet is down: its units back off and keep selling
    procs[0] = await startFleet(db, ports[0] ?? 0);
    await selling(units, 10);
    for (const u of units) await u.drained();
    await verify(db, units);
  } finally {
    for (const u of units) await u.stop();
    for (const p of procs) await stopFleet(p);
  }
}

beforeAll(() => {
  expect(existsSync(CLI), "build first: npx tsc -p tsconfig.build.json").toBe(true);
});

describe("units and a real fleet server on SQLite", () => {
  let dir: string;
  let db: string;
  let port: number;
  let fleet: FleetProc;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-fleet-e2e-"));
    db = join(dir, "fleet.db");
    port = await freePort();
    fleet = await startFleet(db, port);
  }, 30_000);
  afterAll(async () => {
    if (fleet !== undefined) await stopFleet(fleet);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The sender alone in its own process over a journal file, until the backlog is empty or it is killed. */
  function senderProcess(path: string, unitId: string, keyFile: string, point: string | null) {
    return runSenderProcess({
      journal: path,
      unitId,
      keyFile,
      fleetUrl: fleet.url,
      currency: "NOK",
      batchEvents: 5,
      faultPoint: point,
    });
  }

  it.each(FLEET_FAULT_POINTS.map((p) => [p]))(
    "(a) the unit SIGKILLed at %s and restarted: every event once, in order, sales equal",
    async (point) => {
      const unitId = `a-${point.replace("fleet.", "")}`;
      const path = join(dir, `${unitId}.db`);
      const key = generateUnitKey();
      const keyFile = join(dir, `${unitId}.key`);
      writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
      await enrol(fleet.url, db, unitId, key);
      // The journal is only open here while no sender process holds it.
      const open = () => openSqliteJournal({ path, unitId, clock: systemClock, outbox: { currency: "NOK" } });
      const expected: string[] = [];
      const random = seededRandom(point.length);
      const sellSome = (from: number, count: number) => {
        const j = open();
        for (let n = from; n < from + count; n++) {
          sell(j, `${unitId}-s${n}`, 50 + Math.floor(random() * 450), n % 7 === 0);
          expected.push(`${unitId}-s${n}`);
          if (n % 7 === 0) expected.push(`${unitId}-s${n}`);
        }
        j.close();
      };
      sellSome(1, 20);
      expect(await senderProcess(path, unitId, keyFile, `${point}@2`)).toBe("SIGKILL");
      sellSome(21, 6);
      expect(await senderProcess(path, unitId, keyFile, null)).toBe(0);
      const j = open();
      try {
        await verify(db, [{ id: unitId, journal: j, expected }]);
      } finally {
        j.close();
      }
    },
    30_000,
  );

  it("(c) the fleet stopped while units sell, then back: every event once, in order, sales equal", async () => {
    const units = [1, 2, 3].map((n) => new Unit(`down-${n}`, dir, 100 + n));
    try {
      for (const u of units) {
        await enrol(fleet.url, db, u.id, u.key);
        u.start(fleet.url);
      }
      await selling(units, 10);
      expect(await stopFleet(fleet)).toBe(0);
      await selling(units, 30, 20); // about a second with the fleet down
      for (const u of units) expect(u.journal.outboxStats().events).toBeGreaterThan(0);
      fleet = await startFleet(db, port);
      await selling(units, 5);
      for (const u of units) await u.drained();
      await verify(db, units);
    } finally {
      for (const u of units) await u.stop();
    }
  }, 40_000);

  it("(b) the fleet SIGKILLed inside a batch's ingest while units sell, then restarted", async () => {
    await killMidBatch(dir, join(dir, "kill.db"), 1, 1);
  }, 40_000);
});

describe.skipIf(postgresBinDir() === null)("units and real fleet servers on PostgreSQL", () => {
  let pg: PostgresServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-fleet-e2e-pg-"));
    pg = await startPostgres({ database: "e2e" });
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("(b) one of two fleet processes SIGKILLed inside a batch's ingest while units sell, then restarted", async () => {
    await killMidBatch(dir, pg.url, 2, 2);
  }, 60_000);
});
