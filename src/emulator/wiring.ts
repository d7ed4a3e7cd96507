import { randomUUID } from "node:crypto";
import type { CallbackNotifier } from "./callbacks.js";
import { makeStore, type SeedFile } from "./seed.js";
import type { StatsRecorder } from "./stats.js";
import type { CheckinTarget, EmuClock, InterfaceHandler, Ledger } from "./types.js";
import { TokenService } from "./v10/auth.js";
import { createV10CheckinTarget } from "./v10/checkin.js";
import { createV10Handler } from "./v10/handler.js";
import { IdempotencyStore } from "./v10/idempotency.js";
import { nextDue, tick, type V10Deps } from "./v10/machine.js";
import type { Store, V10Config } from "./v10/model.js";
import { refundDue, tickRefunds } from "./v10/refunds.js";
import { V10World } from "./v10/world.js";

export interface V10Parts {
  handler: InterfaceHandler;
  checkinTarget: CheckinTarget;
  /** Also the token endpoint's handler. */
  tokens: TokenService;
  deps: V10Deps;
  /** Unsubscribes from the clock. */
  close(): void;
}

/**
 * Builds the V10 side: records, tokens, idempotency, notification callbacks, the route handler and the
 * check-in target, and runs the time rules on every clock tick.
 */
export function createV10World(input: {
  config: V10Config;
  clock: EmuClock;
  ledger: Ledger;
  stats: StatsRecorder;
  integrators: ReadonlyMap<string, string>;
  callbacks: CallbackNotifier;
  stores: Store[];
  merchants: NonNullable<SeedFile["merchants"]>;
}): V10Parts {
  const world = new V10World(input.config.retentionMs);
  const merchantGuids = new Map<string, string>();
  for (const s of input.stores) {
    world.stores.set(s.storeId, s);
    merchantGuids.set(s.vat, s.merchantGuid);
  }
  for (const m of input.merchants) {
    let guid = merchantGuids.get(m.vat);
    if (guid === undefined) {
      guid = randomUUID();
      merchantGuids.set(m.vat, guid);
    }
    for (const s of m.stores ?? []) {
      const store = makeStore(m.vat, guid, s);
      world.stores.set(store.storeId, store);
    }
  }
  const tokens = new TokenService(input.clock, input.integrators);
  const deps: V10Deps = {
    world,
    config: input.config,
    clock: input.clock,
    ledger: input.ledger,
    stats: input.stats,
    tokens,
    idempotency: new IdempotencyStore(input.clock, input.config.retentionMs),
    hasCallbackAlias: (alias) => input.callbacks.has(alias),
    notifyCheckin(pos) {
      const store = world.stores.get(pos.storeId);
      if (pos.callbackAlias === null || store === undefined) return;
      input.callbacks.notify(pos.callbackAlias, {
        MerchantId: store.merchantGuid,
        MerchantBrandId: store.merchantBrandId,
        MerchantLocationId: store.merchantLocationId,
        MerchantPosId: pos.merchantPosId,
        PosId: pos.posId,
      });
    },
  };
  const unTick = input.clock.onTick((now) => tick(deps, now, (t) => tickRefunds(deps, t)));
  const unSchedule = input.clock.schedule(() => nextDue(deps, refundDue));
  const unsubscribe = (): void => {
    unTick();
    unSchedule();
  };
  return {
    handler: createV10Handler(deps),
    checkinTarget: createV10CheckinTarget(deps),
    tokens,
    deps,
    close: unsubscribe,
  };
}
