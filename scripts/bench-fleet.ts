/**
 * Fleet server bench (issue 16; `npm run bench -- fleet`, or `node dist/scripts/bench-fleet.js` after
 * `npm run build`). 10,000 simulated units, approved in the database beforehand, talk to real
 * `vendd fleet serve` processes (the built CLI) over loopback with signed requests:
 * 1. **mixed load** in compressed time: every unit sends its heartbeat once per simulated minute (a minute
 *    lasts 20 s: 3× real time, 500 heartbeats/s), and vend events arrive at 1,000/s in batches of 10 (about
 *    8× the peak of 10,000 units at 100 vends a day), both open-loop on a fixed schedule; latency is measured
 *    from each request's scheduled time (so a server that falls behind shows it) → p99 ms (target < 50);
 * 2. **ingest throughput**: 64 units post batches of 50 events back to back for a few seconds → events/s
 *    (target ≥ 2,000);
 * 3. the fleet process's RSS sampled every 250 ms during the mixed load after its first (warm-up) minute →
 *    growth from the first quarter's median to the last quarter's highest sample (target ≤ 16 MB: flat);
 * 4. a check that every event the units sent is stored once and each unit's committed seq is its last one.
 * Run on SQLite (one process) and on PostgreSQL (two processes behind a round-robin client, one database).
 * The client shares the machine with the server(s): on 2 cores the figures include both sides' CPU.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Pool } from "undici";
import { generateUnitKey } from "../src/core/fleetAuth.js";
import type { EventBatch } from "../src/core/fleetWire.js";
import type { BenchFigure } from "./benchFigure.js";
import {
  Client,
  type FleetProcess,
  heartbeat,
  median,
  percentile,
  type SimUnit,
  seedUnits,
  sessionEvent,
  startFleet,
  verify,
} from "./fleetBenchRig.js";
import { startPostgres } from "./postgresServer.js";

const UNITS = Number(process.env.VENDD_BENCH_FLEET_UNITS ?? 10_000);
/** One simulated minute lasts this long: heartbeats arrive at UNITS / MINUTE_S per second. */
const MINUTE_MS = Number(process.env.VENDD_BENCH_FLEET_MINUTE_MS ?? 20_000);
const MINUTES = Number(process.env.VENDD_BENCH_FLEET_MINUTES ?? 4);
/** `sqlite`, `postgres` or both (default), comma-separated: to bench one database alone. */
/** Vend events offered per second during the mixed load, in batches of 10. */
const EVENT_RATE = Number(process.env.VENDD_BENCH_FLEET_EVENT_RATE ?? 1000);
const THROUGHPUT_MS = 5_000;
async function runMode(label: string, db: string, processes: number): Promise<BenchFigure[]> {
  const units: SimUnit[] = Array.from({ length: UNITS }, (_, i) => ({
    id: `u${String(i).padStart(5, "0")}`,
    key: generateUnitKey(),
    seq: 0,
  }));
  await seedUnits(db, units);
  const fleets: FleetProcess[] = [];
  for (let i = 0; i < processes; i++) fleets.push(await startFleet(db));
  const pools = fleets.map((f) => new Pool(`http://127.0.0.1:${f.port}`, { connections: 64, pipelining: 1 }));
  const client = new Client(pools);
  try {
    // 1. Mixed load, open loop on a fixed schedule.
    const start = performance.now() + 200;
    const durationMs = MINUTES * MINUTE_MS;
    const jobs: { at: number; run: (scheduled: number) => Promise<unknown> }[] = [];
    for (let m = 0; m < MINUTES; m++) {
      units.forEach((u, i) => {
        const at = start + m * MINUTE_MS + ((i * 7919) % UNITS) * (MINUTE_MS / UNITS);
        jobs.push({ at, run: (s) => client.post(u, "/heartbeat", heartbeat(u, Date.now()), s) });
      });
    }
    const batches = Math.floor((EVENT_RATE / 10) * (durationMs / 1000));
    let cursor = 0;
    for (let b = 0; b < batches; b++) {
      const at = start + (b * durationMs) / batches;
      jobs.push({
        at,
        run: (s) => {
          const unit = units[cursor++ % units.length] as SimUnit;
          const now = Date.now();
          const events = Array.from({ length: 10 }, () => sessionEvent(unit, now));
          const batch: EventBatch = { unitId: unit.id, events };
          return client.post(unit, "/events", batch, s);
        },
      });
    }
    jobs.sort((a, b) => a.at - b.at);
    const inflight = new Set<Promise<unknown>>();
    for (const job of jobs) {
      const wait = job.at - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const p = job.run(job.at).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
    // RSS is judged over the steady mixed load only (the throughput burst below grows the heap once).
    const mixedRss = fleets.map((f) => [...f.rss]);
    const mixedP99 = percentile(client.latencies, 99);
    const mixedP50 = percentile(client.latencies, 50);
    const mixedRequests = client.latencies.length;

    // 2. Closed-loop ingest throughput.
    const senders = units.slice(0, 64);
    let events = 0;
    const t0 = performance.now();
    await Promise.all(
      senders.map(async (u) => {
        while (performance.now() - t0 < THROUGHPUT_MS) {
          const now = Date.now();
          const batch: EventBatch = {
            unitId: u.id,
            events: Array.from({ length: 50 }, () => sessionEvent(u, now)),
          };
          const ack = (await client.post(u, "/events", batch, performance.now())) as {
            committed?: number;
          } | null;
          if (ack?.committed === u.seq) events += 50;
        }
      }),
    );
    const eventsPerS = events / ((performance.now() - t0) / 1000);

    // 3. Memory: first quarter's median against the last quarter's highest sample.
    // The first simulated minute is warm-up (every unit's key parsed and cached, V8's heap sized): RSS is
    // judged over the minutes after it.
    const growths = mixedRss.map((all) => {
      const rss = all.slice(Math.floor(all.length / MINUTES));
      const q = Math.max(1, Math.floor(rss.length / 4));
      return Math.max(...rss.slice(-q)) - median(rss.slice(0, q));
    });
    const rssMax = Math.max(...fleets.flatMap((f) => f.rss));
    for (const p of pools) await p.close();
    for (const f of fleets) await f.stop();

    // 4. Nothing lost or doubled.
    const check = await verify(db, units);
    const name = (k: string) => `fleet.${label}.${k}`;
    process.stderr.write(
      `bench-fleet ${label}: ${mixedRequests} mixed requests (p50 ${mixedP50.toFixed(1)} ms), ` +
        `${client.errors} errors, ${check.stored}/${check.sent} events stored, ` +
        `${check.wrongCommitted} units with a wrong committed seq, RSS max ${rssMax.toFixed(0)} MB\n`,
    );
    return [
      {
        name: name("eventsPerS"),
        figure: Math.round(eventsPerS),
        unit: "events/s",
        target: ">= 2000",
        pass: eventsPerS >= 2000,
      },
      {
        name: name("mixedP99Ms"),
        figure: Number(mixedP99.toFixed(1)),
        unit: "ms",
        target: "< 50",
        pass: mixedP99 < 50,
      },
      {
        name: name("rssGrowthMb"),
        figure: Number(Math.max(...growths).toFixed(1)),
        unit: "MB",
        target: "<= 16",
        pass: Math.max(...growths) <= 16,
      },
      {
        name: name("lostOrDoubled"),
        figure: Math.abs(check.sent - check.stored) + check.wrongCommitted + client.errors,
        unit: "events",
        target: "= 0",
        pass: check.sent === check.stored && check.wrongCommitted === 0 && client.errors === 0,
      },
    ];
  } finally {
    for (const p of pools) await p.close().catch(() => {});
    for (const f of fleets) await f.stop();
  }
}

export async function benchFleet(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), "vendd-bench-fleet-"));
  const figures: BenchFigure[] = [];
  const modes = (process.env.VENDD_BENCH_FLEET_MODES ?? "sqlite,postgres").split(",");
  try {
    if (modes.includes("sqlite")) figures.push(...(await runMode("sqlite", join(dir, "fleet.db"), 1)));
    if (modes.includes("postgres")) {
      const pg = await startPostgres();
      try {
        figures.push(...(await runMode("postgres", pg.url, 2)));
      } finally {
        await pg.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const f of await benchFleet()) process.stdout.write(`${JSON.stringify(f)}\n`);
}
