/**
 * DEX audit reads in the daemon (issue 36, docs/dex.md): on the configured schedule (HH:MM in a named time
 * zone; twice a day by default) and on demand from the console. A read never starts during a vend or within
 * `quietSeconds` of the VMC's last activity; while it runs the unit is out of service (the VMC disabled, the
 * display saying why), because the read takes the machine off-line for seconds. Each read, good or failed,
 * is recorded in the journal with its raw file and parsed counters. One read at a time.
 */
import { randomUUID } from "node:crypto";
import { Cron } from "croner";
import type { Logger } from "pino";
import { countersOf } from "../../drivers/dex/counters.js";
import { parseEvaDts } from "../../drivers/dex/evadts.js";
import type { DexConfig } from "../config/schema-dex.js";
import type { Clock, Timer } from "../core/clock.js";
import { DAY_MS } from "../core/days.js";
import type { DexReadRow, NewDexRead } from "../journal/dexStore.js";

/** What the daemon needs of the reader (drivers/dex/reader.ts DexReader). */
export interface DexReaderLike {
  read(handshakeOnly?: boolean): Promise<{ role: "master" | "slave"; data: Buffer | null; attempts: number }>;
  close(): Promise<void>;
}

export interface DexReadsDeps {
  config: DexConfig;
  clock: Clock;
  logger: Logger;
  /** The journal's DEX reads: `record` also puts the read in the fleet outbox (SqliteJournal.recordDexRead). */
  store: { record(read: NewDexRead): boolean; last(): DexReadRow | null; lastPush?(): DexReadRow | null };
  openReader(): Promise<DexReaderLike>;
  /** No session open at the engine. */
  engineIdle(): boolean;
  /** Out of service for the read (true) and back (false); the engine waits for a running sale. */
  setBusy(busy: boolean): Promise<void>;
  /** Subscribes to VMC activity (any event, with its type when known); returns the unsubscribe. */
  onVmcActivity(listener: (event?: { type: string }) => void): () => void;
  currencyDigits?: number;
}

/** The text the display shows while a read runs. */
export const DEX_BUSY_REASON = "Reading machine audit";
/**
 * What a read asked for during a vend says: the machine has a vend open (asked for, no outcome yet, e.g. a vend
 * the engine captured by policy while the machine still owes its VEND SUCCESS or FAILURE).
 */
export const VEND_IN_PROGRESS =
  "a vend is in progress at the machine (no vend outcome yet); read again when the vend has ended";
/** VMC events that end a vend the machine asked for. */
const VEND_ENDS = new Set(["vendSucceeded", "vendFailed", "vendCancelled", "sessionEnded", "reset"]);
/** How often the quiet gate looks again, and how long it waits at most before the read is skipped. */
const GATE_POLL_MS = 1000;
const GATE_MAX_MS = 30 * 60_000;

/** The next scheduled read after `now` (ms), from HH:MM times in `timeZone`. */
export function nextReadAt(now: number, schedule: readonly string[], timeZone: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (const hhmm of schedule) {
    const [h, m] = hhmm.split(":");
    const next = new Cron(`${Number(m)} ${Number(h)} * * *`, { timezone: timeZone, paused: true }).nextRun(
      new Date(now),
    );
    if (next && next.getTime() < best) best = next.getTime();
  }
  return best;
}

export class DexReads {
  private reader: DexReaderLike | null = null;
  private lastActivity = Number.NEGATIVE_INFINITY;
  /** The machine asked for a vend and has not reported how it ended. */
  private vendOpen = false;
  private timer: Timer | null = null;
  private running: Promise<DexReadRow> | null = null;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: DexReadsDeps) {
    this.unsubscribe = deps.onVmcActivity((event) => {
      this.lastActivity = deps.clock.now();
      if (event?.type === "vendRequested") this.vendOpen = true;
      else if (event !== undefined && VEND_ENDS.has(event.type)) this.vendOpen = false;
    });
  }

  /**
   * Arms the schedule. A slot of the last 24 hours with no read journaled since (the unit was off, or killed
   * during the read) is read now: the read starts again rather than waiting for the next slot.
   */
  start(): void {
    const { clock, config } = this.deps;
    const now = clock.now();
    let slot: number | null = null;
    for (let t = nextReadAt(now - DAY_MS, config.schedule, config.timeZone); t <= now; ) {
      slot = t;
      t = nextReadAt(t, config.schedule, config.timeZone);
    }
    const last = this.deps.store.last();
    if (slot !== null && (last === null || last.at < slot)) {
      this.deps.logger.info({ slot: new Date(slot).toISOString() }, "DEX read missed: reading now");
      void this.read("schedule").catch(() => undefined);
    }
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    const { clock, config } = this.deps;
    const at = nextReadAt(clock.now(), config.schedule, config.timeZone);
    this.timer = clock.setTimer(Math.max(0, at - clock.now()), () => {
      void this.read("schedule")
        .catch(() => undefined)
        .finally(() => this.arm());
    });
  }

  /** The latest read in the journal. */
  last(): DexReadRow | null {
    return this.deps.store.last();
  }

  /** The machine's latest push of events in the journal, or null. */
  lastPush(): DexReadRow | null {
    return this.deps.store.lastPush?.() ?? null;
  }

  /** Reads now (after the quiet gate); a read already running is joined, not started twice. */
  read(trigger: "schedule" | "console"): Promise<DexReadRow> {
    this.running ??= this.readOnce(trigger).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private quietLeft(): number {
    const quietMs = this.deps.config.quietSeconds * 1000;
    return Math.max(0, this.lastActivity + quietMs - this.deps.clock.now());
  }

  /** Waits until the engine is idle and the VMC quiet; false when it stayed busy for GATE_MAX_MS. */
  private async quiet(): Promise<boolean> {
    const { clock } = this.deps;
    const until = clock.now() + GATE_MAX_MS;
    while (!this.stopped && clock.now() < until) {
      const left = this.quietLeft();
      if (left === 0 && this.deps.engineIdle() && !this.vendOpen) return true;
      await clock.sleep(Math.max(left, GATE_POLL_MS));
    }
    return false;
  }

  private async readOnce(trigger: "schedule" | "console"): Promise<DexReadRow> {
    const { clock, logger, store } = this.deps;
    const base = {
      readId: randomUUID(),
      trigger,
      role: null,
      attempts: 0,
      raw: null,
      counters: null,
      g85: null,
      warnings: 0,
    };
    let record: NewDexRead;
    const failed = (error: string): NewDexRead => ({ ...base, at: clock.now(), outcome: "failed", error });
    if (trigger === "console" && this.vendOpen) {
      // the machine owes a vend's outcome: the engine may be idle (captured by policy), the machine is not
      record = failed(VEND_IN_PROGRESS);
    } else if (!(await this.quiet())) {
      record = failed(this.vendOpen ? VEND_IN_PROGRESS : "the machine stayed busy (vends); read skipped");
    } else {
      const out = await this.outOfService();
      if (out !== null) record = failed(out);
      else
        try {
          // a vend that ended while the engine went out of service: let its seconds pass first
          const left = this.quietLeft();
          if (left > 0) await clock.sleep(left);
          record = await this.readPort(base);
        } finally {
          await this.deps.setBusy(false);
        }
    }
    store.record(record);
    logger.info(
      {
        readId: record.readId,
        outcome: record.outcome,
        g85: record.g85,
        ...(record.g85 === "bad" ? { counters: "unverified (G85)" } : {}),
        error: record.error,
      },
      "DEX read",
    );
    return store.last() ?? { ...record, id: 0, counters: null };
  }

  /**
   * Takes the unit out of service for the read; null when it is, else why not (the unit is put back in
   * service). The machine refuses to be switched off in the middle of a vend: that is said as such.
   */
  private async outOfService(): Promise<string | null> {
    try {
      await this.deps.setBusy(true);
      return null;
    } catch (err) {
      await this.deps.setBusy(false).catch(() => undefined);
      const code = (err as { code?: unknown }).code;
      this.deps.logger.warn({ err }, "DEX read: the unit could not go out of service");
      return code === "state"
        ? VEND_IN_PROGRESS
        : `the unit could not go out of service for the read (${err instanceof Error ? err.message : String(err)}); try again`;
    }
  }

  private async readPort(base: Omit<NewDexRead, "at" | "outcome" | "error">): Promise<NewDexRead> {
    const { clock } = this.deps;
    try {
      this.reader ??= await this.deps.openReader();
      const read = await this.reader.read();
      const data = read.data ?? Buffer.alloc(0);
      const report = parseEvaDts(data);
      return {
        ...base,
        at: clock.now(),
        outcome: "ok",
        role: read.role,
        attempts: read.attempts,
        raw: data.toString("latin1"),
        counters: countersOf(report, this.deps.currencyDigits ?? 2),
        g85: report.check.g85,
        warnings: report.warnings.length,
        error: null,
      };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if ((err as { code?: unknown }).code === "port" || this.reader === null) {
        await this.reader?.close().catch(() => undefined);
        this.reader = null; // reopened at the next read
      }
      return { ...base, at: clock.now(), outcome: "failed", error: message };
    }
  }

  /**
   * A session the machine opened by itself to push its events (the unit as slave): journaled as a read of
   * trigger `push` with the raw file (no counters: a push is not an audit read, the three-way never takes it
   * for one) and, in the same transaction, put in the fleet outbox; a failed push is journaled with why.
   */
  recordPush(push: { ok: true; data: Buffer | null } | { ok: false; error: string }): void {
    const { clock, logger, store } = this.deps;
    const base = { readId: randomUUID(), at: clock.now(), trigger: "push" as const, role: "slave" as const };
    const nothing = { raw: null, counters: null, g85: null, warnings: 0 };
    let record: NewDexRead;
    if (push.ok) {
      const data = push.data ?? Buffer.alloc(0);
      const report = parseEvaDts(data);
      record = {
        ...base,
        outcome: "ok",
        attempts: 1,
        raw: data.toString("latin1"),
        counters: null,
        g85: report.check.g85,
        warnings: report.warnings.length,
        error: null,
      };
    } else record = { ...base, ...nothing, outcome: "failed", attempts: 1, error: push.error };
    try {
      store.record(record);
      logger.info(
        { readId: record.readId, outcome: record.outcome, bytes: record.raw?.length ?? 0 },
        "DEX push from the machine",
      );
    } catch (err) {
      logger.error({ err }, "DEX push: the journal did not take it");
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.unsubscribe();
    await this.running?.catch(() => undefined);
    await this.reader?.close().catch(() => undefined);
  }
}
