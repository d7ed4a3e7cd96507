/**
 * The fleet bench's rig (scripts/bench-fleet.ts): `vendd fleet serve` processes with their RSS sampled, the
 * simulated units (keys, seq, the events and heartbeats they send), a signing client that measures each
 * request from its scheduled time, the units seeded as approved, and the after-run check that every event is
 * stored once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, openSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import type { Pool } from "undici";
import { fingerprint, signRequest, type UnitKeyPair } from "../src/core/fleetAuth.js";
import { type Heartbeat, UNIT_API, type UnitEvent } from "../src/core/fleetWire.js";
import { openFleetDb } from "../src/fleet/database.js";
import { freePort } from "./postgresServer.js";

const MAIN = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

export interface SimUnit {
  id: string;
  key: UnitKeyPair;
  seq: number;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (child.exitCode !== null) throw new Error(`fleet serve exited: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fleet serve did not listen: ${log()}`);
}

export interface FleetProcess {
  port: number;
  child: ChildProcess;
  rss: number[];
  stop(): Promise<void>;
}

export async function startFleet(db: string): Promise<FleetProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      // VENDD_BENCH_FLEET_PROF=DIR: a V8 CPU profile of each fleet process, written when it stops.
      ...(process.env.VENDD_BENCH_FLEET_PROF
        ? ["--cpu-prof", "--cpu-prof-dir", process.env.VENDD_BENCH_FLEET_PROF]
        : []),
      // VENDD_BENCH_FLEET_NODE_ARGS: further node options for the fleet processes (e.g. --trace-gc).
      ...(process.env.VENDD_BENCH_FLEET_NODE_ARGS?.split(" ").filter((a) => a !== "") ?? []),
      MAIN,
      "fleet",
      "serve",
      "--db",
      db,
      "--listen",
      `127.0.0.1:${port}`,
    ],
    {
      // VENDD_BENCH_FLEET_STDOUT=PREFIX: each fleet process's stdout (e.g. NODE_OPTIONS=--trace-gc) to a file.
      stdio: [
        "ignore",
        process.env.VENDD_BENCH_FLEET_STDOUT
          ? openSync(`${process.env.VENDD_BENCH_FLEET_STDOUT}-${port}.log`, "w")
          : "ignore",
        "pipe",
      ],
      env: { ...process.env, LOG_LEVEL: "warn", VENDD_LOG_LEVEL: "warn" },
    },
  );
  let log = "";
  child.stderr?.on("data", (b: Buffer) => {
    log = (log + b.toString()).slice(-4000);
    if (process.env.VENDD_BENCH_FLEET_STDERR) appendFileSync(process.env.VENDD_BENCH_FLEET_STDERR, b);
  });
  await waitForPort(port, child, () => log);
  const rss: number[] = [];
  const timer = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
      if (m?.[1] !== undefined) rss.push(Number(m[1]) / 1024);
    } catch {
      // gone
    }
  }, 250);
  return {
    port,
    child,
    rss,
    async stop() {
      clearInterval(timer);
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

export function sessionEvent(unit: SimUnit, at: number): UnitEvent {
  unit.seq += 1;
  const price = 150 + (unit.seq % 7) * 25;
  return {
    seq: unit.seq,
    at,
    kind: "session",
    data: {
      sessionId: `s-${unit.seq}`,
      orderId: `${unit.id}-1790000000-${unit.seq}`,
      paymentId: `p-${unit.id}-${unit.seq}`,
      driver: unit.seq % 2 === 0 ? "v10" : "legacy",
      flow: "selection",
      item: unit.seq % 12,
      price,
      result: "captured",
      reason: "vend delivered",
      approved: price,
      captured: price,
      refunded: 0,
      currency: "NOK",
      openedAt: at - 20_000,
      closedAt: at,
      vends: [{ item: unit.seq % 12, price, outcome: "success" }],
      review: false,
    },
  };
}

export function heartbeat(unit: SimUnit, at: number): Heartbeat {
  return {
    unitId: unit.id,
    at,
    state: "inService",
    reason: "",
    versions: { vendd: "0.1.0", config: "7", release: "0.1.0" },
    backlog: { events: 0, oldestAt: null, lastSeq: unit.seq },
    journal: { ok: true, detail: "ok" },
    vmc: "up",
    payment: "up",
    unresolved: 0,
  };
}

export interface PreparedRequest {
  which: number;
  path: string;
  full: string;
  text: string;
  headers: Record<string, string>;
}

export class Client {
  private next = 0;
  readonly latencies: number[] = [];
  /** Per request: [scheduled ms, latency ms, 0 heartbeat | 1 events, fleet process], for VENDD_BENCH_FLEET_TRACE. */
  readonly trace: [number, number, number, number][] = [];
  errors = 0;
  constructor(private readonly pools: Pool[]) {}

  /**
   * A request ready to send: its fleet process, body and signed headers. The mixed load prepares all its
   * requests before it starts (scripts/bench-fleet.ts), as 10,000 units would sign theirs on their own CPUs.
   */
  prepare(unit: SimUnit, path: string, body: unknown, now = Date.now()): PreparedRequest {
    const which = this.next++ % this.pools.length;
    const text = JSON.stringify(body);
    const full = `${UNIT_API}${path}`;
    const headers = { "content-type": "application/json", ...signRequest(unit.key, "POST", full, text, now) };
    return { which, path, full, text, headers };
  }

  /** Prepares and sends at once (the closed-loop throughput phase). */
  post(unit: SimUnit, path: string, body: unknown, scheduled: number): Promise<unknown> {
    return this.send(this.prepare(unit, path, body), scheduled);
  }

  /** Sends a prepared request; its latency counts from `scheduled`. */
  async send(req: PreparedRequest, scheduled: number): Promise<unknown> {
    const { which, path, full, text, headers } = req;
    const pool = this.pools[which] as Pool;
    try {
      const res = await pool.request({ method: "POST", path: full, headers, body: text });
      const out = await res.body.text();
      const latency = performance.now() - scheduled;
      this.latencies.push(latency);
      this.trace.push([scheduled, latency, path === "/heartbeat" ? 0 : 1, which]);
      if (res.statusCode !== 200) {
        this.errors += 1;
        if (this.errors <= 3)
          process.stderr.write(`bench-fleet: ${path} → ${res.statusCode} ${out.slice(0, 200)}\n`);
        return null;
      }
      return JSON.parse(out) as unknown;
    } catch (err) {
      this.errors += 1;
      if (this.errors <= 3) process.stderr.write(`bench-fleet: ${path} failed: ${(err as Error).message}\n`);
      return null;
    }
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export async function seedUnits(db: string, units: SimUnit[]): Promise<void> {
  const fleet = await openFleetDb(db);
  try {
    const now = Date.now();
    for (let i = 0; i < units.length; i += 500) {
      const rows = units.slice(i, i + 500).map((u) => ({
        id: u.id,
        public_key: u.key.publicKey,
        fingerprint: fingerprint(u.key.publicKey),
        label: `bench ${u.id}`,
        status: "approved" as const,
        enrolled_at: now,
        decided_by: "bench",
        decided_at: now,
        committed_seq: 0,
        backlog_events: 0,
        unresolved: 0,
      }));
      await fleet.db.insertInto("units").values(rows).execute();
    }
  } finally {
    await fleet.close();
  }
}

export async function verify(
  db: string,
  units: SimUnit[],
): Promise<{ stored: number; sent: number; wrongCommitted: number }> {
  const fleet = await openFleetDb(db);
  try {
    const stored = await fleet.db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    const rows = await fleet.db.selectFrom("units").select(["id", "committed_seq"]).execute();
    const committed = new Map(rows.map((r) => [r.id, Number(r.committed_seq)]));
    let wrongCommitted = 0;
    let sent = 0;
    for (const u of units) {
      sent += u.seq;
      if (committed.get(u.id) !== u.seq) wrongCommitted += 1;
    }
    return { stored: Number(stored.n), sent, wrongCommitted };
  } finally {
    await fleet.close();
  }
}
