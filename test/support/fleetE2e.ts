/**
 * The unit ↔ fleet end-to-end tests' world (fleet-e2e.test.ts on SQLite, fleet-e2e-pg.test.ts on
 * PostgreSQL): real `vendd fleet serve` processes (the built CLI), units in this process (a journal file with
 * its outbox and the real signed sender over HTTP), sales through the journal's own API, and the check that
 * every event is on the fleet once, in seq order, with the fleet's sales equal to the journal's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { beforeAll, expect } from "vitest";
import { freePort } from "../../scripts/postgresServer.js";
import { systemClock } from "../../src/core/clock.js";
import { generateUnitKey, signRequest, type UnitKeyPair } from "../../src/core/fleetAuth.js";
import { UNIT_API } from "../../src/core/fleetWire.js";
import { seededRandom } from "../../src/core/random.js";
import { FleetLink } from "../../src/daemon/fleetLink.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { openSqliteJournal, type SqliteJournal } from "../../src/journal/sqlite.js";
import { CLI } from "./cli.js";
import { journalSale } from "./journalSales.js";

const silent = pino({ level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FleetProc {
  url: string;
  child: ChildProcess;
  exit: Promise<NodeJS.Signals | number>;
}

/** `vendd fleet serve` on `port`, once it printed that it serves; `faultPoint` arms VENDD_FAULT_POINT. */
export async function startFleet(
  db: string,
  port: number,
  faultPoint: string | null = null,
): Promise<FleetProc> {
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

export async function stopFleet(
  p: FleetProc,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<NodeJS.Signals | number> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  return p.exit;
}

/** Enrols `key` as `unitId` through the real `/enroll`, then approves it in the fleet's database. */
export async function enrol(url: string, db: string, unitId: string, key: UnitKeyPair): Promise<void> {
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
export function sell(j: SqliteJournal, id: string, price: number, refund: boolean): void {
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
export class Unit {
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
export async function verify(
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
export async function selling(units: readonly Unit[], rounds: number, gapMs = 10): Promise<void> {
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
export async function killMidBatch(dir: string, db: string, fleets: number, seed: number): Promise<void> {
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

/** The file's first check: the tests run the built CLI. */
export function expectBuiltCli(): void {
  beforeAll(() => {
    expect(existsSync(CLI), "build first: npx tsc -p tsconfig.build.json").toBe(true);
  });
}
