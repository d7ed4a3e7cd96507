import type { LoadedConfig } from "../config/load.js";
import { createUnitContext, type Devices, type UnitDeps } from "./parts/context.js";
import { type ControlPart, controlPart } from "./parts/control.js";
import { displayPart, journalPart, paymentPart, statusPart, vmcLinkPart } from "./parts/devices.js";
import { dexPart } from "./parts/dex.js";
import { type EnginePart, enginePart } from "./parts/engine.js";
import { fleetPart } from "./parts/fleet.js";
import { housekeepingPart } from "./parts/housekeeping.js";
import { membersPart } from "./parts/members.js";
import { metricsPart } from "./parts/metrics.js";
import { type Part, PartList } from "./parts/part.js";
import { type PeripheralsPart, peripheralsPart } from "./parts/peripherals.js";
import { servicePart } from "./parts/service.js";
import { updateHealthPart } from "./parts/update.js";
import type { Daemon } from "./types.js";

export type { Devices } from "./parts/context.js";

/**
 * The unit's parts in start order; they stop in the reverse order. The devices the daemon opened come first
 * so they close last (the journal very last); the service part, which takes the unit into service in the
 * background, comes after every part that follows the engine; the control socket comes last so it closes
 * first. A new part is one more entry (docs/developers.md, "The daemon's parts").
 */
export function unitParts(): {
  parts: Part[];
  engine: EnginePart;
  control: ControlPart;
  peripherals: PeripheralsPart;
} {
  const members = membersPart(() => engine.current?.idle ?? false);
  const engine = enginePart(members);
  const peripherals = peripheralsPart(members);
  const fleet = fleetPart(members);
  const dex = dexPart(peripherals);
  const control = controlPart({ engine, peripherals, fleet, dex });
  const parts: Part[] = [
    journalPart(),
    displayPart(),
    paymentPart(),
    vmcLinkPart(),
    statusPart(),
    engine,
    members,
    peripherals,
    fleet,
    dex,
    housekeepingPart(engine, fleet),
    updateHealthPart(),
    metricsPart(),
    servicePart(engine, members),
    control,
  ];
  return { parts, engine, control, peripherals };
}

/**
 * The unit's life once its devices exist: its parts started in order (reach the service and settle what
 * the journal left, go in service, re-check the journal after a write failure that can heal), stopped in
 * reverse order. Everything the unit says about its state goes through one ServiceState.
 */
export function runUnit(loaded: LoadedConfig, deps: UnitDeps, d: Devices): Daemon {
  const ctx = createUnitContext(loaded, deps, d);
  const { parts, engine, control, peripherals } = unitParts();
  const list = new PartList(parts);
  list.start(ctx);
  return {
    status: () => ctx.state.status(),
    get engine() {
      return engine.current;
    },
    failed: ctx.failed,
    restartRequested: control.restartRequested,
    onStatus: (listener) => ctx.state.onStatus(listener),
    stop: () => list.stop(),
    reloadLogin(config) {
      control.setLogin(config);
      peripherals.setBadges(config.nfc.badges);
    },
  };
}
