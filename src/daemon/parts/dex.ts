/**
 * The DEX reader part (issue 36): the DEX audit reads (../dexUnit.ts) when `dex.enabled`, started once the
 * unit is in service. A read takes the unit out of service for its duration (ServiceRequests.dexBusy).
 */
import type { DexReads } from "../dexReads.js";
import { startDexReads } from "../dexUnit.js";
import type { Part } from "./part.js";
import type { PeripheralsPart } from "./peripherals.js";

export interface DexPart extends Part<{ busy: boolean } | null> {
  /** The DEX reads; null when DEX is not enabled or the unit is not in service yet. */
  readonly reads: DexReads | null;
}

export function dexPart(peripherals: PeripheralsPart): DexPart {
  let dex: DexReads | null = null;
  let busy = false;
  return {
    name: "dex",
    get reads() {
      return dex;
    },
    start(ctx) {
      const { requests, state } = ctx;
      ctx.hooks.onInService((live) => {
        dex = startDexReads({
          config: ctx.config,
          clock: ctx.clock,
          logger: ctx.logger,
          journal: ctx.devices.journal,
          vmc: ctx.devices.vmc,
          engineIdle: () => live.current.tag === "idle" && live.failure === null,
          setBusy: async (b) => {
            busy = b;
            requests.dexBusy = b;
            // status says so from before the device is disabled until after it is enabled again
            if (b) state.setDexRead(true);
            try {
              await live.setOutOfService(
                requests.console ?? peripherals.current?.reason ?? requests.dexReason(),
              );
            } finally {
              if (!b) state.setDexRead(false);
            }
          },
        });
      });
    },
    async stop() {
      await dex?.stop();
    },
    status: () => (dex === null ? null : { busy }),
  };
}
