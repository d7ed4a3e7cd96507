/**
 * Wires the fleet link into a running unit (issue 16): the outbox events the daemon reports itself (service
 * changes and faults, from the unit's status; the version at start), the sender and heartbeat
 * (fleetLink.ts), and outbox retention. Started only when the config has a `fleet` section.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { VenddConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import { DAY_MS } from "../core/days.js";
import type { FleetFaultPoints } from "../core/faults.js";
import { loadUnitKey, type UnitKeyPair } from "../core/fleetAuth.js";
import { fleetDispatcher } from "../core/fleetCa.js";
import type { FaultData, Heartbeat, ServiceData } from "../core/fleetWire.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { PublicKey } from "../update/minisign.js";
import { readUpdateOutcome } from "../update/state.js";
import { dropSpooledStep, spooledSteps, spoolStep } from "../update/stepSpool.js";
import {
  fetchBundleToInbox,
  heldBundleFile,
  readHeldBundleEtag,
  writeHeldBundleEtag,
} from "./bundleFetch.js";
import { loadEntitlementKey } from "./entitlementStore.js";
import { type EntitlementStore, fetchEntitlements } from "./entitlements.js";
import { FleetLink, type FleetLinkOptions, type FleetStatus, undiciTransportVia } from "./fleetLink.js";
import type { UnitSigner } from "./signedGet.js";
import type { ReasonCode, UnitStatus } from "./status.js";
import { fetchValues, heldValuesFile, readHeldValues } from "./valuesFetch.js";

/** A session open longer than this counts as unresolved in the heartbeat (longer than any timeout). */
const STALE_OPEN_MS = 15 * 60_000;

/** Status reasons that are faults on the fleet, by fault code. */
const FAULTS: Partial<Record<ReasonCode, { code: string; message: string }>> = {
  paymentUnreachable: { code: "paymentUnreachable", message: "payment service unreachable" },
  paymentRefused: { code: "paymentRefused", message: "payment service refused this unit" },
  vmcUnavailable: { code: "vmcLink", message: "VMC link lost" },
  journal: { code: "journalWrite", message: "journal write failure" },
  failure: { code: "failure", message: "out of service after an error" },
};

export interface FleetUnitDeps {
  config: VenddConfig;
  journal: SqliteJournal;
  clock: Clock;
  random: () => number;
  logger: Logger;
  /** The running vendd version. */
  version: string;
  status(): UnitStatus;
  onStatus(listener: (s: UnitStatus) => void): () => void;
  faults?: FleetFaultPoints;
  /** The unit's entitlement list (issue 18), kept current from the fleet when the config has one. */
  entitlements?: EntitlementStore;
}

export interface FleetUnit {
  /** What `status` shows of the fleet link. */
  status(): FleetStatus;
  /** Outbox retention (housekeeping): delivered events past retentionDays, undelivered past maxBacklogDays. */
  retain(): void;
  stop(): Promise<void>;
}

/** Reports `fn`'s event; an outbox write failure is logged, never thrown (the fleet is not the money path). */
function safely(logger: Logger, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logger.error({ err }, "the outbox event could not be written");
  }
}

/** The service and fault events of a status change (pure): what changed since `prev`. */
export function statusEvents(
  prev: UnitStatus | null,
  next: UnitStatus,
): { service: ServiceData | null; faults: FaultData[] } {
  const state = (s: UnitStatus): ServiceData["state"] =>
    s.inService
      ? "inService"
      : s.reasons.some((r) => r.code === "serviceMode")
        ? "serviceMode"
        : "outOfService";
  const first = (s: UnitStatus) => s.reasons[0]?.code ?? "";
  const service =
    prev === null || state(prev) !== state(next) || first(prev) !== first(next)
      ? { state: state(next), reason: (next.reasons[0]?.detail ?? "").slice(0, 500) }
      : null;
  const codes = (s: UnitStatus | null) => new Set(s?.reasons.map((r) => r.code) ?? []);
  const before = codes(prev);
  const after = codes(next);
  const faults: FaultData[] = [];
  for (const [reason, f] of Object.entries(FAULTS)) {
    if (f === undefined) continue;
    const was = before.has(reason as ReasonCode);
    const is = after.has(reason as ReasonCode);
    if (was === is) continue;
    const detail = next.reasons.find((r) => r.code === reason)?.detail ?? f.message;
    faults.push({
      code: f.code,
      state: is ? "raised" : "cleared",
      message: (is ? detail : f.message).slice(0, 500),
    });
  }
  return { service, faults };
}

/** The outbox's `service` and `fault` events, from the unit's status now and at each change. */
function reportStatusChanges(d: FleetUnitDeps, logger: Logger): () => void {
  const { journal } = d;
  let last: UnitStatus | null = null;
  const onStatus = (s: UnitStatus) => {
    const { service, faults } = statusEvents(last, s);
    last = s;
    safely(logger, () =>
      journal.atomically(
        () => {
          for (const f of faults) journal.report("fault", f);
          if (service !== null) journal.report("service", service);
        },
        { durable: false },
      ),
    );
  };
  onStatus(d.status());
  return d.onStatus(onStatus);
}

/** Outbox retention: delivered events past retentionDays, undelivered past maxBacklogDays (logged). */
function retainOutbox(d: FleetUnitDeps, fleet: NonNullable<VenddConfig["fleet"]>, logger: Logger): void {
  const { journal } = d;
  const now = d.clock.now();
  const r = journal.retainOutbox(now - fleet.retentionDays * DAY_MS, now - fleet.maxBacklogDays * DAY_MS);
  if (r.dropped.length > 0)
    logger.error(
      { dropped: r.dropped.length, maxBacklogDays: fleet.maxBacklogDays },
      "fleet unreachable beyond the backlog limit: the oldest undelivered events were dropped (outboxOverflow)",
    );
}

/** The heartbeat's view of the unit: its state, versions, journal, links and unsettled sessions. */
function heartbeatOf(d: FleetUnitDeps): Omit<Heartbeat, "unitId" | "at" | "backlog"> {
  const { journal } = d;
  const s = d.status();
  const codes = new Set(s.reasons.map((r) => r.code));
  const update = readUpdateOutcome(d.config.updates.stateDir);
  const release =
    update.outcome?.kind === "release" && update.outcome.result === "committed" ? update.outcome : null;
  return {
    state: s.inService ? "inService" : (s.reasons[0]?.code ?? "outOfService"),
    reason: (s.reasons[0]?.detail ?? "").slice(0, 500),
    versions: {
      vendd: d.version.slice(0, 64),
      config: update.highWater > 0 ? String(update.highWater) : null,
      release: release?.version == null ? null : String(release.version),
    },
    journal: codes.has("journal")
      ? { ok: false, detail: (s.reasons.find((r) => r.code === "journal")?.detail ?? "").slice(0, 500) }
      : { ok: true, detail: "ok" },
    vmc:
      codes.has("vmcUnavailable") || codes.has("failure") ? "down" : codes.has("starting") ? "unknown" : "up",
    payment:
      codes.has("paymentUnreachable") || codes.has("paymentRefused")
        ? "down"
        : codes.has("starting")
          ? "unknown"
          : "up",
    // A session in progress is not a problem for the fleet to show: only one left unsettled, or open for
    // longer than any payment or vend can take (recovery's work).
    fleet: d.config.updates.fleet,
    unresolved: journal
      .unresolved()
      .filter((r) => r.result === "unsettled" || d.clock.now() - r.openedAt > STALE_OPEN_MS).length,
  };
}

/**
 * Issue 41: the fleet's values for this unit, kept current from the heartbeat's `valuesEtag` when the
 * config names the fleet's values key (valuesFetch.ts). A key that cannot be read is logged: no values are
 * taken (those held stay in force).
 */
function valuesSync(
  d: FleetUnitDeps,
  fleet: NonNullable<VenddConfig["fleet"]>,
  signer: UnitSigner,
  logger: Logger,
  signal: AbortSignal,
  dispatcher: Dispatcher | undefined,
): { values?: NonNullable<FleetLinkOptions["values"]> } {
  if (fleet.valuesKey === undefined) return {};
  let publicKey: PublicKey;
  try {
    publicKey = loadEntitlementKey(fleet.valuesKey);
  } catch (err) {
    logger.error(
      { err: err instanceof Error ? err.message : String(err) },
      "fleet.valuesKey cannot be read: the fleet's values are not taken",
    );
    return {};
  }
  const unitId = d.config.unit.id;
  const file = heldValuesFile(fleet.keyFile);
  return {
    values: {
      held: readHeldValues(file, unitId).etag,
      fetch: async (held) => {
        const r = await fetchValues(
          fleet.url,
          signer,
          { unitId, publicKey, file, etag: held },
          {
            signal,
            dispatcher,
          },
        );
        if (r.status !== "stored") return null;
        logger.info(
          {
            file,
            groups: r.document.groups.map((g) => g.name),
            unitKeys: Object.keys(r.document.unit).length,
          },
          "the fleet's values for this unit stored: they take effect when the daemon restarts (systemctl restart vendd); vendd config print --origin shows them now",
        );
        return r.etag;
      },
    },
  };
}

export function startFleetUnit(d: FleetUnitDeps): FleetUnit | null {
  const fleet = d.config.fleet;
  if (fleet === undefined) return null;
  const logger = d.logger.child({ component: "fleet" });
  const { journal } = d;

  safely(logger, () =>
    journal.report("version", {
      kind: "release",
      bundleId: null,
      version: d.version.slice(0, 128),
      outcome: "started",
      reason: "",
    }),
  );
  const unsubscribe = reportStatusChanges(d, logger);

  const retain = () => retainOutbox(d, fleet, logger);

  let key: UnitKeyPair | null = null;
  let keyProblem = "";
  let dispatcher: Dispatcher | undefined;
  try {
    key = loadUnitKey(readFileSync(fleet.keyFile, "utf8"));
  } catch (err) {
    keyProblem = `the unit key ${fleet.keyFile} cannot be used (${err instanceof Error ? err.message : String(err)}): run \`vendd fleet enroll\``;
    logger.error({ keyFile: fleet.keyFile }, keyProblem);
  }
  if (key !== null) {
    try {
      dispatcher = fleetDispatcher(fleet.caFile);
    } catch (err) {
      // The link stays off (the unit vends and settles on its own); status shows why until a restart.
      key = null;
      keyProblem = err instanceof Error ? err.message : String(err);
      logger.error({ caFile: fleet.caFile }, keyProblem);
    }
  }
  if (key === null) {
    return {
      status: () => {
        const s = journal.outboxStats();
        return {
          state: "disabled",
          backlog: s.events,
          oldestAt: s.oldestAt,
          lastAckAt: null,
          warning: keyProblem,
        };
      },
      retain,
      async stop() {
        unsubscribe();
      },
    };
  }

  const heartbeat = () => heartbeatOf(d);

  const stopping = new AbortController();
  const store = d.entitlements;
  const signer = { key, clock: d.clock };
  const heldFile = heldBundleFile(fleet.keyFile);
  const inbox = d.config.updates.inbox;
  const link = new FleetLink({
    url: fleet.url,
    unitId: d.config.unit.id,
    key,
    transport: undiciTransportVia(dispatcher),
    outbox: journal,
    clock: d.clock,
    random: d.random,
    logger,
    heartbeat,
    heartbeatMs: fleet.heartbeatSeconds * 1000,
    batchEvents: fleet.batchEvents,
    backlogWarnEvents: fleet.backlogWarnEvents,
    backlogWarnMs: fleet.backlogWarnHours * 3_600_000,
    ...(d.faults === undefined ? {} : { faults: d.faults }),
    steps: {
      pending: () => spooledSteps(inbox),
      done: (name) => dropSpooledStep(inbox, name),
    },
    bundles: {
      held: readHeldBundleEtag(heldFile),
      jitterMs: fleet.bundleJitterSeconds * 1000,
      fetch: async (held) => {
        const r = await fetchBundleToInbox(fleet.url, signer, held, inbox, {
          signal: stopping.signal,
          dispatcher,
        });
        if (r.status !== "fetched") return null;
        const etag = r.etag ?? `"${r.sha256}"`;
        writeHeldBundleEtag(heldFile, etag);
        spoolStep(inbox, { sha256: r.sha256, step: "fetched", reason: "", at: d.clock.now() });
        logger.info({ sha256: r.sha256, file: r.file }, "bundle fetched from the fleet into the inbox");
        return etag;
      },
    },
    ...valuesSync(d, fleet, signer, logger, stopping.signal, dispatcher),
    ...(store === undefined
      ? {}
      : {
          entitlements: async (held: string | null) => {
            const r = await fetchEntitlements(fleet.url, signer, held, store, {
              signal: stopping.signal,
              dispatcher,
            });
            if (r.status === "updated")
              logger.info(
                { serial: r.list.serial, members: r.list.members.length },
                "entitlement list installed",
              );
            return r.status === "updated" ? r.etag : null;
          },
        }),
  });
  const running = link.run(stopping.signal);
  return {
    status: () => link.status(),
    retain,
    async stop() {
      unsubscribe();
      stopping.abort(new Error("daemon stopping"));
      await running;
      await dispatcher?.close();
    },
  };
}
