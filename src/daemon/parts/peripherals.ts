/**
 * The peripherals part: the engine's peripherals (service button, door, beacon, NFC reader for badges,
 * ../peripherals.ts), started once the engine runs (members only, or in service). Their requests (service
 * mode, door) join the console's and the DEX read's in the engine's out-of-service reason.
 */
import type { BadgeEntry } from "../../../drivers/nfc/badges.js";
import type { VendEngine } from "../../engine/runner.js";
import { type Peripherals, startPeripherals } from "../peripherals.js";
import type { UnitContext } from "./context.js";
import type { MembersPart } from "./members.js";
import type { Part } from "./part.js";

export interface PeripheralsPart extends Part<{ beacon: "on" | "off"; reason: string | null }> {
  /** The running peripherals; null before the engine runs. */
  readonly current: Peripherals | null;
  /** The technician badges from a reloaded config (SIGHUP), now or once the peripherals start. */
  setBadges(badges: readonly BadgeEntry[]): void;
}

export function peripheralsPart(members: MembersPart): PeripheralsPart {
  let peripherals: Peripherals | null = null;
  /** Badges reloaded since start (null: the start-up config's). */
  let reloaded: readonly BadgeEntry[] | null = null;

  const attach = async (ctx: UnitContext, e: VendEngine): Promise<void> => {
    const { state, requests, config, clock, logger, devices: d } = ctx;
    const gate = members.current?.gate;
    const control = {
      get pos() {
        return e.pos;
      },
      async setOutOfService(reason: string | null) {
        state.setRequested(
          peripherals?.doorOpen ?? false,
          (peripherals?.serviceMode ?? false) || requests.console !== null,
        );
        await e.setOutOfService(reason ?? requests.console ?? requests.dexReason());
      },
    };
    if (requests.console !== null) await control.setOutOfService(null);
    peripherals = await startPeripherals(config, {
      clock,
      logger,
      engine: control,
      gpio: d.gpio,
      ...(gate === undefined ? {} : { members: gate }),
      ...(d.nfc === undefined ? {} : { devices: { nfc: d.nfc } }),
    });
    if (reloaded !== null) peripherals.setBadges(reloaded);
  };

  return {
    name: "peripherals",
    get current() {
      return peripherals;
    },
    setBadges(badges) {
      reloaded = badges;
      peripherals?.setBadges(badges);
    },
    start(ctx) {
      ctx.hooks.onRunning((e) => attach(ctx, e));
      ctx.hooks.onPaymentsBack(() => peripherals?.refreshBeacon());
    },
    async stop() {
      await peripherals?.close();
    },
    status: () => ({
      beacon: peripherals?.beacon === null || peripherals === null ? "off" : "on",
      reason: peripherals?.reason ?? null,
    }),
  };
}
