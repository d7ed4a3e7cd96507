import { type ConsistencyReport, checkConsistency } from "../check/consistency.js";
import {
  type ActorContext,
  checkinSession,
  pause,
  selectionVend,
  type VendRecord,
  waitUntil,
} from "./actors.js";
import { readJournal } from "./journalView.js";
import type { Unit } from "./rig.js";
import { pickFault } from "./serviceFaults.js";
import { UNIT_UNKNOWN_OUTCOME } from "./unitFiles.js";

/**
 * Random kills: each daemon lifetime ends with SIGKILL after a seeded delay in [minMs, maxMs), counted from
 * the spawn (kills also land in start-up and recovery) or from "unit in service". Counted from the spawn,
 * after `MAX_KILLS_BEFORE_SERVICE` lifetimes in a row were killed before they reached service, the next one
 * is counted from "in service": on a slow or loaded machine start-up can outlast `maxMs`, and a rig that
 * never lets the unit sell would prove nothing about sales.
 */
export interface KillSchedule {
  minMs: number;
  maxMs: number;
  from: "spawn" | "ready";
}

/** Lifetimes in a row killed before service, after which the next kill waits for service. */
export const MAX_KILLS_BEFORE_SERVICE = 3;

export interface ScenarioOptions {
  /** Vend requests the VMC makes in total (a check-in session makes 1-3). */
  vends: number;
  /** Seeded randomness of the actors (prices, outcomes, sessions). */
  random: () => number;
  /** Seeded randomness of the kills and faults (a separate stream). */
  chaosRandom?: () => number;
  kills?: KillSchedule | null;
  /** Emulator faults to arm in total, one (count 1) at each restart with probability ½ (default 0). */
  faults?: number;
  /** Share of approved vends the VMC delivers (default 0.85); the rest fail. */
  successRate?: number;
  /** First vend index (prices are 1.00 + index/100, unique per run). */
  firstIndex?: number;
  /** Stops requesting vends once this is true (checked before each vend or session). */
  until?: () => boolean;
  /** A progress line per vend. */
  out?: NodeJS.WritableStream;
  signal?: AbortSignal;
}

export interface ScenarioResult {
  records: VendRecord[];
  kills: number;
  faults: number;
}

/** The customers' app user: credit card, accepts at once (emulator user 01). */
const PHONE = "+4520031801";

/** A unique price per vend request (minor units), ≤ 6.00 so that three fit in a 20.00 session. */
export function priceOf(index: number): number {
  return 100 + (index % 500);
}

/**
 * Drives a running unit: the VMC requests vends, customers pay, the VMC dispenses; optionally kills the
 * daemon at seeded random moments (restarting it at once: recovery runs at start) and arms emulator faults.
 */
export async function runScenario(unit: Unit, opts: ScenarioOptions): Promise<ScenarioResult> {
  const { emu, sim } = unit.world;
  const legacy = unit.shape.driver === "legacy";
  const ctx: ActorContext = {
    emu,
    sim,
    beaconId: unit.files.beaconId,
    phone: PHONE,
    payWithinMs: legacy ? 6000 : 4000,
    decideWithinMs: legacy ? 8000 : 6000,
    random: opts.random,
    signal: opts.signal,
  };
  const chaos = opts.chaosRandom ?? opts.random;
  const records: VendRecord[] = [];
  let done = false;
  let faults = 0;
  let killError: unknown = null;
  const killer = (async () => {
    const k = opts.kills;
    if (!k) return;
    let killedBeforeService = 0;
    try {
      while (!done && !opts.signal?.aborted) {
        const d = unit.daemon;
        if (d === null) throw new Error("no daemon to kill");
        const fromReady = k.from === "ready" || killedBeforeService >= MAX_KILLS_BEFORE_SERVICE;
        if (fromReady) await waitUntil(() => unit.inService || done || d.exited !== null, 30_000);
        const base = fromReady ? Date.now() : d.spawnedAt;
        const at = base + k.minMs + Math.floor(chaos() * (k.maxMs - k.minMs));
        await waitUntil(() => Date.now() >= at || done || d.exited !== null, k.maxMs + 1000);
        if (d.exited !== null)
          throw new Error(`the daemon exited by itself (${d.exited.code ?? d.exited.signal}):\n${d.tail()}`);
        if (done) return;
        killedBeforeService = unit.inService ? 0 : killedBeforeService + 1;
        await unit.crash();
        if (faults < (opts.faults ?? 0) && chaos() < 0.5) {
          emu.faults.add(pickFault(unit.shape.driver, chaos));
          faults++;
        }
        if (k.from === "ready") await unit.start();
        else unit.launch();
      }
    } catch (err) {
      killError = err;
    }
  })();
  let index = opts.firstIndex ?? 0;
  try {
    while (records.length < opts.vends && !opts.signal?.aborted && killError === null && !opts.until?.()) {
      if (!(await waitUntil(() => unit.inService || killError !== null, 30_000, opts.signal)))
        throw new Error(`the unit did not come into service:\n${unit.daemon?.tail() ?? ""}`);
      if (killError !== null) break;
      if (unit.shape.flow === "selection") {
        const price = priceOf(index++);
        records.push(await selectionVend(ctx, 1 + (price % 9), price, opts.successRate ?? 0.85));
      } else {
        const n = Math.min(1 + Math.floor(opts.random() * 3), opts.vends - records.length);
        const plan = Array.from({ length: n }, () => {
          const price = priceOf(index++);
          return { item: 1 + (price % 9), price };
        });
        records.push(...(await checkinSession(ctx, plan, opts.successRate ?? 0.85)));
      }
      const last = records.at(-1);
      opts.out?.write(
        `vend ${records.length}/${opts.vends}: ${last?.price ?? "-"} ${last?.outcome ?? "-"}\n`,
      );
      // The VMC returns to idle before the next customer (the unit settles meanwhile).
      await pause(30 + Math.floor(opts.random() * 70));
    }
  } finally {
    done = true;
    await killer;
  }
  if (killError !== null) throw killError;
  return { records, kills: unit.kills, faults };
}

/**
 * The consistency checker on one unit of the rig: its journal (read-only, `path`), its own ledger entries and
 * the VMC simulator's record since the unit was created, under the unit's `engine.unknownOutcome`.
 */
export function checkUnit(unit: Unit, records: readonly VendRecord[]): ConsistencyReport {
  const { sim } = unit.world;
  return checkConsistency({
    journal: readJournal(unit.files.journalPath),
    ledger: unit.ledger(),
    policy: UNIT_UNKNOWN_OUTCOME,
    vmc: {
      approvals: sim.approvals.slice(unit.approvalMark),
      vends: records,
      violations: sim.violations.slice(unit.violationMark),
    },
    idlePayment: unit.keepsIdlePayment,
  });
}

/**
 * Lets recovery finish (faults cleared), stops the unit with SIGTERM, and runs the consistency checker on
 * the journal (read-only), the ledger and the VMC simulator.
 */
export async function finishAndCheck(
  unit: Unit,
  records: readonly VendRecord[],
): Promise<ConsistencyReport & { unresolved: number }> {
  unit.world.emu.faults.clear();
  const unresolved = await unit.settleAndStop();
  return { ...checkUnit(unit, records), unresolved };
}
