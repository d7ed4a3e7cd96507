/**
 * The control socket's `status` answer (public: the update applier's health gate reads it): the unit's
 * service state and reasons, its links, the last vends, the audit chain and the last update.
 */
import type { ControlStatus, LinkState } from "../core/controlStatus.js";
import { formatAmount } from "../core/money.js";
import { printable } from "../core/printable.js";
import { waitingInInbox, waitingLines } from "../update/inboxWaiting.js";
import { readUpdateOutcome, type UpdateStatus } from "../update/state.js";
import type { ConsoleUnit } from "./consoleUnit.js";
import type { FleetStatus } from "./fleetLink.js";

export function controlStatus(u: ConsoleUnit): ControlStatus {
  const s = u.status();
  const codes = new Set(s.reasons.map((r) => r.code));
  const e = u.engine();
  const payment: LinkState =
    codes.has("paymentUnreachable") || codes.has("paymentRefused") || codes.has("starting")
      ? "down"
      : e !== null
        ? "up"
        : "unknown";
  const journal: LinkState = codes.has("journal") ? "down" : "up";
  const vmc: LinkState = codes.has("vmcUnavailable")
    ? "down"
    : e === null
      ? "unknown"
      : codes.has("failure")
        ? "down"
        : "up";
  const store = u.journal.console();
  const audit = store.verifyAudit();
  const update = readUpdateOutcome(u.config.updates.stateDir);
  const recent = u.journal.sessions({ limit: 5 }).map((x) => ({
    at: x.openedAt,
    orderId: x.orderId,
    item: x.item,
    price: formatAmount(x.price),
    result: x.closedAt === null ? "open" : (x.result ?? "closed"),
  }));
  return {
    unitId: u.config.unit.id,
    inService: s.inService,
    reasons: s.reasons.map((r) => ({ code: r.code, detail: r.detail, retryAt: r.retryAt })),
    links: { vmc, payment, journal },
    unresolved: u.journal.unresolved().length,
    configVersion: update.highWater,
    update: describeUpdate(update),
    // Issue 43: what waits for the update applier, and whether one has run.
    updateWaiting: waitingLines(
      u.config.updates.inbox,
      waitingInInbox(u.config.updates.inbox),
      u.now(),
      u.configFile,
    ),
    serviceMode: u.serviceReason(),
    engine: e === null ? "not started" : e.current.tag,
    beacon: u.beacon(),
    beaconId: e?.pos?.beaconId ?? null,
    lastVends: recent,
    audit: { ok: audit.ok, detail: audit.detail },
    currency: u.config.currency,
    ...fleetStatus(u),
  };
}

function fleetStatus(u: ConsoleUnit): { fleet?: FleetStatus } {
  const f = u.fleet?.() ?? null;
  return f === null ? {} : { fleet: f };
}

/** One line on the last update (a bundle or a console change) and one in progress. */
export function describeUpdate(s: UpdateStatus): string {
  if (s.problem !== null) return `update state unreadable: ${printable(s.problem, 80)}`;
  if (s.pending !== null) return `applying version ${s.pending.version} (${s.pending.phase})`;
  const o = s.outcome;
  if (o === null) return "no update applied";
  const what = `${o.kind ?? "bundle"} ${o.bundleId ?? ""} from ${o.source}`;
  return `${o.result.replace("_", " ")}: ${printable(what, 80)}${o.reason === null ? "" : ` (${printable(o.reason, 80)})`}`;
}
