/**
 * The fleet link part (config `fleet`, ../fleetUnit.ts): outbox events of status changes, the sender and
 * the heartbeat. Never in the money path: nothing waits for it.
 */
import type { FleetStatus } from "../fleetLink.js";
import { type FleetUnit, startFleetUnit } from "../fleetUnit.js";
import type { MembersPart } from "./members.js";
import type { Part } from "./part.js";

export interface FleetPart extends Part<FleetStatus | null> {
  /** Outbox retention (the housekeeping round); nothing without a fleet link. */
  retain(): void;
}

export function fleetPart(members: MembersPart): FleetPart {
  let fleetUnit: FleetUnit | null = null;
  return {
    name: "fleet",
    start(ctx) {
      const m = members.current;
      fleetUnit = startFleetUnit({
        config: ctx.config,
        journal: ctx.devices.journal,
        clock: ctx.clock,
        random: ctx.random,
        logger: ctx.logger,
        version: ctx.deps.version ?? "unknown",
        status: () => ctx.state.status(),
        onStatus: (l) => ctx.state.onStatus(l),
        ...(ctx.deps.fleetFaults === undefined ? {} : { faults: ctx.deps.fleetFaults }),
        // Issue 18: the heartbeat's entitlementsEtag keeps the member list current (fetched, verified, installed).
        ...(m === null ? {} : { entitlements: m.store }),
      });
    },
    retain() {
      fleetUnit?.retain();
    },
    async stop() {
      await fleetUnit?.stop();
    },
    status: () => fleetUnit?.status() ?? null,
  };
}
