/**
 * What the control protocol's `status` command answers, and its guard on the client side (the update
 * health gate, the console, tests): `unknown` in, a typed ControlStatus out or ControlProtocolError.
 */
import { ControlProtocolError, isRecord } from "./control.js";

/** Link state as the status command reports it. */
export type LinkState = "up" | "down" | "unknown";

/**
 * What `status` answers (the health gate of updates reads `inService`, `reasons`, `links`,
 * `unresolved`, `configVersion`). Mirrors the daemon's UnitStatus without importing it (core is the
 * bottom layer).
 */
export interface ControlStatus {
  unitId: string;
  inService: boolean;
  reasons: { code: string; detail: string; retryAt: number | null }[];
  links: { vmc: LinkState; payment: LinkState; journal: LinkState };
  unresolved: number;
  configVersion: number;
  /** The fleet link (issue 16); absent when the unit has none. */
  fleet?: ControlFleetStatus;
  [key: string]: unknown;
}

/** The fleet link as `status` reports it. */
export interface ControlFleetStatus {
  state: "ok" | "unreachable" | "notApproved" | "disabled";
  backlog: number;
  oldestAt: number | null;
  lastAckAt: number | null;
  warning: string | null;
}

const FLEET_STATES = ["ok", "unreachable", "notApproved", "disabled"] as const;

/** The optional `fleet` object of a status answer; undefined when absent or malformed. */
function parseFleetStatus(x: unknown): ControlFleetStatus | undefined {
  if (!isRecord(x)) return undefined;
  const state = FLEET_STATES.find((s) => s === x.state);
  if (state === undefined || typeof x.backlog !== "number") return undefined;
  const num = (v: unknown) => (typeof v === "number" ? v : null);
  return {
    state,
    backlog: x.backlog,
    oldestAt: num(x.oldestAt),
    lastAckAt: num(x.lastAckAt),
    warning: typeof x.warning === "string" ? x.warning : null,
  };
}

/** Guard for a `status` result (client side): the fields the health gate needs, typed. */
export function parseControlStatus(x: unknown): ControlStatus {
  if (!isRecord(x)) throw new ControlProtocolError("badAnswer", "status is not an object");
  const links = x.links;
  const reasons = x.reasons;
  if (
    typeof x.unitId !== "string" ||
    typeof x.inService !== "boolean" ||
    !Array.isArray(reasons) ||
    !isRecord(links) ||
    typeof x.unresolved !== "number" ||
    typeof x.configVersion !== "number"
  )
    throw new ControlProtocolError(
      "badAnswer",
      "status lacks unitId, inService, reasons, links, unresolved or configVersion",
    );
  const link = (v: unknown): LinkState => (v === "up" || v === "down" ? v : "unknown");
  const parsedReasons = reasons.filter(isRecord).map((r) => ({
    code: String(r.code),
    detail: typeof r.detail === "string" ? r.detail : "",
    retryAt: typeof r.retryAt === "number" ? r.retryAt : null,
  }));
  const { fleet: rawFleet, ...rest } = x;
  const fleet = parseFleetStatus(rawFleet);
  return {
    ...rest,
    unitId: x.unitId,
    inService: x.inService,
    reasons: parsedReasons,
    links: { vmc: link(links.vmc), payment: link(links.payment), journal: link(links.journal) },
    unresolved: x.unresolved,
    configVersion: x.configVersion,
    ...(fleet === undefined ? {} : { fleet }),
  };
}
