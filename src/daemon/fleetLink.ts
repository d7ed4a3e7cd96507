/**
 * The unit's link to the fleet server (issue 16): the sender posts the journal's outbox in batches, in seq
 * order, and marks events delivered up to the fleet's acknowledged `committed`; a heartbeat says what the unit
 * is doing every `heartbeatSeconds`. Every request is signed with the unit's key (src/core/fleetAuth.ts).
 *
 * The fleet is never in the money path: this loop only reads the outbox and writes `delivered` marks; no
 * part of the engine waits for it. While the fleet is unreachable it backs off with jitter (capped) and the
 * backlog waits in the journal; a 403 (not approved, revoked) is retried slowly. Exactly once: an event is
 * marked delivered only after the fleet said it committed it; a lost answer means the batch is sent again,
 * and the fleet ignores what it already has (idempotent on (unit, seq)).
 */
import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { Clock } from "../core/clock.js";
import type { FleetFaultPoints } from "../core/faults.js";
import { signRequest, type UnitKeyPair } from "../core/fleetAuth.js";
import {
  EventAck,
  type EventBatch,
  type Heartbeat,
  HeartbeatResponse,
  parseWire,
  StepAck,
  type StepReport,
  UNIT_API,
} from "../core/fleetWire.js";
import type { Outbox } from "../journal/outbox.js";
import { type Backoff, backoffDelay } from "../payment/retry.js";

export type FleetState = "ok" | "unreachable" | "notApproved" | "disabled";

/** What `vendd status` shows of the fleet link. */
export interface FleetStatus {
  state: FleetState;
  /** Undelivered events. */
  backlog: number;
  oldestAt: number | null;
  /** When the fleet last acknowledged a batch or a heartbeat. */
  lastAckAt: number | null;
  /** The backlog warning (too many events, or the oldest too old), or null. */
  warning: string | null;
}

/** The answer of one request, as the link needs it. */
export interface FleetAnswer {
  status: number;
  body: unknown;
}

/** Sends one signed POST; throws on a network error or timeout. */
export type FleetTransport = (
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  signal?: AbortSignal,
) => Promise<FleetAnswer>;

/** What the heartbeat reports besides the backlog (read from the daemon at each beat). */
export type HeartbeatSource = () => Omit<Heartbeat, "unitId" | "at" | "backlog">;

export interface FleetLinkOptions {
  /** The fleet's base URL (config fleet.url). */
  url: string;
  unitId: string;
  key: UnitKeyPair;
  outbox: Outbox;
  clock: Clock;
  /** Jitter source in [0, 1). */
  random: () => number;
  logger: Logger;
  heartbeat: HeartbeatSource;
  heartbeatMs: number;
  batchEvents: number;
  backlogWarnEvents: number;
  backlogWarnMs: number;
  /** Time limit of one request (default 15 s). */
  timeoutMs?: number;
  /** Backoff while unreachable (default 5 s doubling to 10 min, equal jitter). */
  backoff?: Backoff;
  /** Wait after a 403 (default 15 min). */
  notApprovedMs?: number;
  /** How often an idle link looks for new events (default 5 s). */
  pollMs?: number;
  transport?: FleetTransport;
  /** Crash points of the crash tests (default none). */
  faults?: FleetFaultPoints;
  /**
   * Issue 18: fetches and installs the entitlement list when a heartbeat answer advertises an
   * `entitlementsEtag` other than the one held. Gets the ETag held (null before the first list) and
   * returns the ETag now held (null: keep the advertised one). A failure is logged and tried again at the
   * next heartbeat; it never fails the round (the outbox keeps flowing) and never touches vending.
   */
  entitlements?: (held: string | null) => Promise<string | null>;
  /**
   * Issue 41: fetches the fleet's bundle into the applier's inbox (bundleFetch.ts) when a heartbeat answer
   * advertises a `bundleEtag` other than the one held: at once, after a jitter drawn from [0, jitterMs), so
   * a whole fleet told in the same minute does not arrive in the same second. `fetch` gets the ETag held
   * and returns the one now held (null: keep the one held). A failure is logged and tried again at the next
   * heartbeat; it never fails the round and never touches vending.
   */
  steps?: StepSource;
  /**
   * Issue 41: fetches, verifies and stores the values the fleet holds for this unit (valuesFetch.ts) when a
   * heartbeat answer advertises a `valuesEtag` other than the one held. `fetch` gets the ETag held and
   * returns the one now held (null: keep the advertised one). A failure is logged and tried again at the
   * next heartbeat; the values held stay in force.
   */
  values?: { held: string; fetch: (held: string) => Promise<string | null> };
  bundles?: {
    held: string | null;
    jitterMs: number;
    fetch: (held: string | null) => Promise<string | null>;
  };
}

/** Issue 41: the spool of a bundle's steps the link sends (src/update/stepSpool.ts). */
export interface StepSource {
  /** The steps waiting, oldest first. */
  pending(): { name: string; step: Omit<StepReport, "unitId"> }[];
  /** The fleet acknowledged this one. */
  done(name: string): void;
}

export const DEFAULT_FLEET_BACKOFF: Backoff = { baseDelayMs: 5_000, maxDelayMs: 600_000 };

class FleetRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * undici POST with a time limit on the whole exchange, through `dispatcher` when given (the agent that
 * trusts `fleet.caFile`, src/core/fleetCa.ts).
 */
export function undiciTransportVia(dispatcher: Dispatcher | undefined): FleetTransport {
  return (url, body, headers, timeoutMs, signal) => post(dispatcher, url, body, headers, timeoutMs, signal);
}

/** undici POST through undici's default agent (the system's certificate authorities). */
export const undiciTransport: FleetTransport = undiciTransportVia(undefined);

async function post(
  dispatcher: Dispatcher | undefined,
  ...[url, body, headers, timeoutMs, signal]: Parameters<FleetTransport>
): Promise<FleetAnswer> {
  // Loaded on first use: a unit without a fleet link never loads it.
  const { request } = await import("undici");
  const res = await request(url, {
    ...(dispatcher === undefined ? {} : { dispatcher }),
    method: "POST",
    body,
    headers: { ...headers, "content-type": "application/json" },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal:
      signal === undefined
        ? AbortSignal.timeout(timeoutMs)
        : AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
  });
  const text = await res.body.text();
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = text.slice(0, 200);
  }
  return { status: res.statusCode, body: parsed };
}

export class FleetLink {
  private state: FleetState = "unreachable";
  private lastAckAt: number | null = null;
  private failures = 0;
  private nextHeartbeat = 0;
  private warned = false;
  private readonly transport: FleetTransport;
  private readonly base: string;
  private signal: AbortSignal | undefined;
  private entitlementsEtag: string | null = null;
  private valuesEtag: string | null;
  private bundleEtag: string | null;
  /** The advertised bundle ETag waiting for its fetch, and when that fetch is due (its jitter drawn). */
  private bundleWanted: { etag: string; dueAt: number } | null = null;

  constructor(private readonly o: FleetLinkOptions) {
    this.transport = o.transport ?? undiciTransport;
    this.base = o.url.replace(/\/+$/, "");
    this.bundleEtag = o.bundles?.held ?? null;
    this.valuesEtag = o.values?.held ?? null;
  }

  status(): FleetStatus {
    const s = this.o.outbox.outboxStats();
    return {
      state: this.state,
      backlog: s.events,
      oldestAt: s.oldestAt,
      lastAckAt: this.lastAckAt,
      warning: this.warning(s.events, s.oldestAt),
    };
  }

  private warning(events: number, oldestAt: number | null): string | null {
    const age = oldestAt === null ? 0 : this.o.clock.now() - oldestAt;
    if (events > this.o.backlogWarnEvents)
      return `${events} events wait for the fleet (more than ${this.o.backlogWarnEvents})`;
    if (age > this.o.backlogWarnMs)
      return `the oldest undelivered event is ${Math.floor(age / 3_600_000)} h old (limit ${Math.floor(this.o.backlogWarnMs / 3_600_000)} h)`;
    return null;
  }

  /**
   * Runs until `signal` aborts: a round (heartbeat when due, then every pending batch), then the wait it
   * asks for. Never throws.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    while (!signal.aborted) {
      const wait = await this.round();
      try {
        await this.o.clock.sleep(wait, signal);
      } catch {
        return;
      }
    }
  }

  /**
   * One round: the heartbeat if due, then batches while events are pending. Returns how long to wait before
   * the next round, ms: the backoff after a failure, else until the next heartbeat or the next look.
   */
  async round(): Promise<number> {
    try {
      const now = this.o.clock.now();
      if (now >= this.nextHeartbeat) {
        await this.beat();
        this.nextHeartbeat = this.o.clock.now() + this.o.heartbeatMs;
      }
      await this.sendAll();
      await this.sendSteps();
      this.failures = 0;
      this.state = "ok";
      this.checkWarning();
      await this.fetchBundleIfDue();
      const due = this.bundleWanted === null ? Number.POSITIVE_INFINITY : this.bundleWanted.dueAt;
      return Math.max(
        0,
        Math.min(this.o.pollMs ?? 5_000, this.nextHeartbeat - this.o.clock.now(), due - this.o.clock.now()),
      );
    } catch (err) {
      // Stopping: the request was cut by the daemon, not by the fleet.
      if (this.signal?.aborted === true) return 0;
      this.failures++;
      this.checkWarning();
      if (err instanceof FleetRefused && err.status === 403) {
        if (this.state !== "notApproved")
          this.o.logger.warn({ status: err.status, detail: err.message }, "the fleet refuses this unit");
        this.state = "notApproved";
        return this.o.notApprovedMs ?? 900_000;
      }
      const delay = backoffDelay(this.failures, this.o.backoff ?? DEFAULT_FLEET_BACKOFF, this.o.random);
      if (this.state !== "unreachable" || this.failures === 1)
        this.o.logger.warn(
          { err: err instanceof Error ? err.message : String(err), retryInMs: delay },
          "fleet unreachable",
        );
      this.state = "unreachable";
      return delay;
    }
  }

  private checkWarning(): void {
    const s = this.o.outbox.outboxStats();
    const w = this.warning(s.events, s.oldestAt);
    if (w !== null && !this.warned) this.o.logger.warn({ backlog: s.events }, `fleet backlog: ${w}`);
    this.warned = w !== null;
  }

  private async post(path: string, payload: unknown): Promise<unknown> {
    const body = JSON.stringify(payload);
    const full = `${UNIT_API}${path}`;
    const headers = signRequest(this.o.key, "POST", full, body, this.o.clock.now());
    const answer = await this.transport(
      `${this.base}${full}`,
      body,
      headers,
      this.o.timeoutMs ?? 15_000,
      this.signal,
    );
    if (answer.status < 200 || answer.status > 299) {
      const b = answer.body;
      const msg =
        typeof b === "object" && b !== null && "error" in b
          ? JSON.stringify(b.error)
          : `HTTP ${answer.status}`;
      throw new FleetRefused(answer.status, `${path}: ${answer.status} ${msg.slice(0, 300)}`);
    }
    return answer.body;
  }

  private async beat(): Promise<void> {
    const s = this.o.outbox.outboxStats();
    const hb: Heartbeat = {
      ...this.o.heartbeat(),
      unitId: this.o.unitId,
      at: this.o.clock.now(),
      backlog: { events: s.events, oldestAt: s.oldestAt, lastSeq: s.lastSeq },
    };
    const parsed = parseWire(HeartbeatResponse, await this.post("/heartbeat", hb));
    if (!parsed.ok) throw new Error(`heartbeat answer: ${parsed.error}`);
    this.lastAckAt = this.o.clock.now();
    this.committed(parsed.value.committed);
    await this.syncEntitlements(parsed.value.entitlementsEtag ?? null);
    await this.syncValues(parsed.value.valuesEtag ?? null);
    this.noteBundleHint(parsed.value.bundleEtag);
  }

  private async syncValues(advertised: string | null): Promise<void> {
    const v = this.o.values;
    if (v === undefined || advertised === null || advertised === this.valuesEtag) return;
    try {
      this.valuesEtag = (await v.fetch(this.valuesEtag ?? v.held)) ?? advertised;
    } catch (err) {
      if (this.signal?.aborted === true) return;
      this.o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "the fleet's values for this unit could not be taken: the values held stay, tried again at the next heartbeat",
      );
    }
  }

  /** The ETag of the bundle the unit last handed to its applier (null before the first). */
  heldBundleEtag(): string | null {
    return this.bundleEtag;
  }

  /** A heartbeat's bundle hint: a new ETag schedules one fetch after the jitter (a repeat keeps its time). */
  private noteBundleHint(advertised: string | null): void {
    const b = this.o.bundles;
    if (b === undefined || advertised === null || advertised === this.bundleEtag) {
      if (advertised === null || advertised === this.bundleEtag) this.bundleWanted = null;
      return;
    }
    if (this.bundleWanted?.etag === advertised) return;
    const jitter = Math.floor(this.o.random() * Math.max(0, b.jitterMs));
    this.bundleWanted = { etag: advertised, dueAt: this.o.clock.now() + jitter };
  }

  private async fetchBundleIfDue(): Promise<void> {
    const b = this.o.bundles;
    const wanted = this.bundleWanted;
    if (b === undefined || wanted === null || this.o.clock.now() < wanted.dueAt) return;
    this.bundleWanted = null;
    try {
      this.bundleEtag = (await b.fetch(this.bundleEtag)) ?? this.bundleEtag;
    } catch (err) {
      if (this.signal?.aborted === true) return;
      this.o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "the bundle the fleet offers could not be fetched: tried again at the next heartbeat",
      );
    }
  }

  /** The ETag of the entitlement list the unit holds (null before the first). */
  heldEntitlementsEtag(): string | null {
    return this.entitlementsEtag;
  }

  private async syncEntitlements(advertised: string | null): Promise<void> {
    const fetch = this.o.entitlements;
    if (fetch === undefined || advertised === null || advertised === this.entitlementsEtag) return;
    try {
      this.entitlementsEtag = (await fetch(this.entitlementsEtag)) ?? advertised;
    } catch (err) {
      if (this.signal?.aborted === true) return;
      this.o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "the entitlement list could not be fetched: the list in force stays, tried again at the next heartbeat",
      );
    }
  }

  /**
   * Applies the fleet's committed seq: renumbers a replaced journal; sends again what a fleet restored from
   * an older backup lacks; else marks delivered.
   */
  private committed(committed: number): void {
    const { lastSeq } = this.o.outbox.outboxStats();
    if (committed < lastSeq) {
      const n = this.o.outbox.resendOutbox(committed);
      if (n > 0)
        this.o.logger.warn(
          { committed, lastSeq, resent: n },
          "the fleet has fewer events from this unit than it acknowledged before (restored from a backup?): sending them again",
        );
    }
    if (committed > lastSeq) {
      const n = this.o.outbox.renumberOutbox(committed);
      this.o.logger.warn(
        { committed, lastSeq, renumbered: n },
        "the fleet has more events from this unit than this journal assigned (journal replaced?): undelivered events renumbered",
      );
      return;
    }
    this.o.faults?.hit("fleet.beforeMark");
    this.o.outbox.markDelivered(committed);
    this.o.faults?.hit("fleet.afterMark");
  }

  /** Issue 41: every spooled step, oldest first, each dropped once the fleet acknowledged it. */
  private async sendSteps(): Promise<void> {
    const steps = this.o.steps;
    if (steps === undefined) return;
    for (const { name, step } of steps.pending()) {
      const report: StepReport = { unitId: this.o.unitId, ...step };
      const parsed = parseWire(StepAck, await this.post("/steps", report));
      if (!parsed.ok) throw new Error(`steps answer: ${parsed.error}`);
      steps.done(name);
    }
  }

  private async sendAll(): Promise<void> {
    for (;;) {
      const events = this.o.outbox.outboxPending(this.o.batchEvents);
      const first = events[0];
      if (first === undefined) return;
      const batch: EventBatch = { unitId: this.o.unitId, events };
      this.o.faults?.hit("fleet.beforePost");
      const parsed = parseWire(EventAck, await this.post("/events", batch));
      if (!parsed.ok) throw new Error(`events answer: ${parsed.error}`);
      this.lastAckAt = this.o.clock.now();
      this.committed(parsed.value.committed);
      // No progress: the fleet is missing events before this batch (a gap it cannot fill). Stop here and
      // try again next round rather than spin; the heartbeat shows the fleet the same numbers.
      if (parsed.value.committed < first.seq) {
        this.o.logger.warn(
          { committed: parsed.value.committed, first: first.seq },
          "the fleet did not commit the batch",
        );
        return;
      }
    }
  }
}
