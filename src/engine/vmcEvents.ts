import type { VmcEvent } from "../../drivers/vmc/controller.js";
import type { EngineDeps } from "./options.js";
import type { EngineInput, PlanDecision } from "./types.js";

/** What the VMC event handler needs of the engine (runner.ts). */
export interface VmcEventHost {
  readonly deps: EngineDeps;
  /** False while out of service with no sale running, or after a failure: vend requests are denied. */
  readonly accepting: boolean;
  /** True when no session is open (selection first): a member's plan decision may apply. */
  readonly idle: boolean;
  /** True once the engine is out of service by failure (journal). */
  readonly broken: boolean;
  atomic(fn: () => void, durable?: boolean): boolean;
  /** True when the step of `input` would need a durable commit (its effects, computed without I/O). */
  needsDurable(input: EngineInput): boolean;
  dispatch(input: EngineInput): void;
  background(p: Promise<unknown>, what: string): void;
  /**
   * VMC events held while a vend request waits for a badge tap in progress (issue 31), in their order;
   * null when nothing is held.
   */
  held: VmcEvent[] | null;
}

/**
 * Turns VMC events into engine inputs, in their order. A vend request taken while idle during a badge tap
 * (the member gate's `settling`) is held until the tap is decided (bounded: memberGate.ts TAP_WAIT_MS),
 * and the events after it wait behind it, so a member's quick selection is never paid or denied for timing.
 */
export function onVmcEvent(host: VmcEventHost, e: VmcEvent): void {
  if (host.held !== null) {
    host.held.push(e);
    return;
  }
  const wait =
    e.type === "vendRequested" && host.accepting && host.idle
      ? (host.deps.plans?.settling?.() ?? null)
      : null;
  if (wait === null) {
    takeVmcEvent(host, e);
    return;
  }
  host.deps.logger.info(
    { item: e.type === "vendRequested" ? e.item : null },
    "vend request waits for the badge tap",
  );
  host.held = [e];
  void wait.then(() => {
    const events = host.held ?? [];
    host.held = null;
    // A request held again (another tap began meanwhile) keeps the rest behind it.
    for (const ev of events) onVmcEvent(host, ev);
  });
}

/**
 * Turns one VMC event into an engine input. A vend request gets its session ids here, the order id in the
 * same transaction as the session it opens; a request that cannot be served is denied at once.
 */
function takeVmcEvent(host: VmcEventHost, e: VmcEvent): void {
  const { vmc, journal, logger } = host.deps;
  if (!host.accepting) {
    if (e.type === "vendRequested") host.background(vmc.denyVend(), "deny while out of service");
    return;
  }
  switch (e.type) {
    case "vendRequested": {
      // A member's tap decides the next vend request taken while idle (no network: the gate is local).
      const plan = host.idle ? planDecision(host, e.item, e.price) : undefined;
      const input = {
        type: "vendRequested",
        item: e.item,
        price: e.price,
        sessionId: host.deps.newId(),
        ...(plan === undefined ? {} : { plan }),
      } as const;
      // Durable when the request starts a payment; a request refused at once (busy, price) does not wait
      // for fsync: its order id never leaves the unit (src/journal/DURABILITY.md).
      const durable = host.needsDurable({ ...input, orderId: "" });
      host.atomic(() => host.dispatch({ ...input, orderId: journal.nextOrderId() }), durable);
      if (host.broken) host.background(vmc.denyVend(), "deny after journal failure");
      return;
    }
    case "vendSucceeded":
      host.dispatch({ type: "vendSucceeded", item: e.item });
      return;
    case "vendFailed":
      host.dispatch({ type: "vendFailed" });
      return;
    case "vendCancelled":
      host.dispatch({ type: "vendCancelled" });
      return;
    case "sessionEnded":
      host.dispatch({ type: "sessionEnded" });
      return;
    case "reset":
      host.dispatch({ type: "vmcReset", reason: e.reason });
      return;
    case "sessionStarted":
    case "link":
      logger.info({ vmc: e }, "vmc event");
      return;
  }
}

/** The member gate's decision; a gate that fails (a journal read) leaves the normal payment flow. */
function planDecision(host: VmcEventHost, item: number, price: number): PlanDecision | undefined {
  try {
    return host.deps.plans?.decide(item, price) ?? undefined;
  } catch (err) {
    host.deps.logger.error({ err }, "member gate failed; normal payment flow");
    return undefined;
  }
}
