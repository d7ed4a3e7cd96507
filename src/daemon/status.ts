/**
 * The unit's service state in one small typed value: what `Daemon.status()` returns, what the systemd
 * STATUS line says, and what a technician console or a fleet heartbeat reads. A unit is in service exactly
 * when there is no reason for it not to be.
 */

export type ReasonCode =
  /** Start-up: the first attempt to reach the payment service is running. */
  | "starting"
  /** The payment service does not answer (refused, reset, timeout, 5xx), or unfinished sales wait for it. */
  | "paymentUnreachable"
  /** The payment service answers but refuses this unit (credentials, unknown store): fix the config. */
  | "paymentRefused"
  /** The VMC link (the cashless adapter's serial port) could not be opened or configured: retried. */
  | "vmcUnavailable"
  /** The journal cannot be used (at start: an operator must act) or cannot be written (disk full). */
  | "journal"
  /** The engine stopped on an error that does not heal by itself. */
  | "failure"
  /** A technician switched service mode on (service button, badge). */
  | "serviceMode"
  | "doorOpen"
  /** A DEX audit read has the machine's port (issue 42): the cashless device is disabled for its seconds. */
  | "dexRead"
  | "stopping";

export interface StatusReason {
  code: ReasonCode;
  /** What is wrong, for the technician and the log (never a secret). */
  detail: string;
  /** When vendd tries again by itself (ms since the epoch), or null when it does not (a person must act). */
  retryAt: number | null;
}

export interface UnitStatus {
  inService: boolean;
  /** Every reason the unit is out of service, most fundamental first; empty when in service. */
  reasons: readonly StatusReason[];
}

/** What the daemon knows; each part is null (or false) when it is no reason. */
export interface StatusParts {
  /** Reaching the payment service and settling what the journal left unresolved. */
  connect: StatusReason | null;
  /** An engine failure, healing or not. */
  failure: StatusReason | null;
  doorOpen: boolean;
  serviceMode: boolean;
  stopping: boolean;
  /**
   * Members only (issue 31): the payment service has not answered since the start, but the VMC is enabled
   * for members' plan vends (a valid entitlement list). Still out of service for paid vends.
   */
  membersOnly?: boolean;
  /** A DEX audit read is running (the unit is out of service for it). */
  dexRead?: boolean;
}

/** Why the unit is out of service while a DEX read runs (status, console, fleet heartbeat). */
export const DEX_READ_DETAIL = "reading the machine's audit";

/** What a members-only unit adds to why it is out of service (status line, console, log). */
export const MEMBERS_ONLY = "members' plan vends continue, card payments unavailable";

/** The status from its parts (pure). */
export function composeStatus(p: StatusParts): UnitStatus {
  const reasons: StatusReason[] = [];
  if (p.stopping) reasons.push({ code: "stopping", detail: "stopping", retryAt: null });
  if (p.connect !== null)
    reasons.push(
      p.membersOnly === true ? { ...p.connect, detail: `${p.connect.detail}; ${MEMBERS_ONLY}` } : p.connect,
    );
  if (p.failure !== null) reasons.push(p.failure);
  if (p.doorOpen) reasons.push({ code: "doorOpen", detail: "door open", retryAt: null });
  if (p.serviceMode) reasons.push({ code: "serviceMode", detail: "service mode", retryAt: null });
  if (p.dexRead === true) reasons.push({ code: "dexRead", detail: DEX_READ_DETAIL, retryAt: null });
  return { inService: reasons.length === 0, reasons };
}

/** The systemd STATUS text: one line, what is wrong and when vendd tries again. */
export function statusLine(unitId: string, s: UnitStatus, now: number): string {
  if (s.inService) return `in service as ${unitId}`;
  const parts = s.reasons.map((r) =>
    r.retryAt === null
      ? r.detail
      : `${r.detail}; retry in ${Math.max(0, Math.ceil((r.retryAt - now) / 1000))} s`,
  );
  return `out of service: ${parts.join(" | ")}`.replace(/[\r\n]+/g, " ");
}

/** The short reason on the unit's own screen under "Out of service" (customers read it too). */
export function screenReason(r: StatusReason): string {
  switch (r.code) {
    case "starting":
      return "Connecting to the payment service";
    case "paymentUnreachable":
      return "Payment service unreachable";
    case "paymentRefused":
      return "Payment service refused this unit";
    case "vmcUnavailable":
      return "Vending machine not connected";
    case "journal":
      return "Journal cannot be written";
    case "failure":
      return "Service required";
    case "serviceMode":
      return "Service mode";
    case "doorOpen":
      return "Door open";
    case "dexRead":
      return "Reading machine audit";
    case "stopping":
      return "Stopping";
  }
}
