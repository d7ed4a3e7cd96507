import type { LoadedConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import { EntitlementStore, loadEntitlementKey, MemberGate } from "./entitlements.js";
import type { Devices } from "./parts/context.js";
import type { DaemonDeps } from "./types.js";

/** The unit's member plan vends: the list store and the gate the engine and the NFC reader share. */
export interface Members {
  store: EntitlementStore;
  gate: MemberGate;
  close(): void;
}

/**
 * Member plan vends (issue 18), when the config names an entitlement key: the list store (read at start,
 * re-read when its file changes) and the member gate the engine and the NFC reader share. A key that cannot
 * be read leaves the unit without plan vends (logged), never out of service.
 */
export function startMembers(
  loaded: LoadedConfig,
  deps: DaemonDeps & { clock: Clock },
  d: Devices,
  idle: () => boolean,
): Members | null {
  const ent = loaded.config.entitlements;
  if (ent === null) return null;
  const logger = deps.logger.child({ component: "entitlements" });
  let publicKey: ReturnType<typeof loadEntitlementKey>;
  try {
    publicKey = loadEntitlementKey(ent.publicKey);
  } catch (err) {
    logger.error({ err }, "the entitlement key cannot be read: no plan vends");
    return null;
  }
  const store = new EntitlementStore({
    publicKey,
    listFile: ent.listFile,
    unitId: loaded.config.unit.id,
    clock: deps.clock,
    logger,
  });
  store.load();
  const unwatch = store.watch();
  const gate = new MemberGate({
    store,
    journal: d.journal,
    clock: deps.clock,
    logger,
    display: d.display,
    overAllowance: ent.overAllowance,
    tapWindowMs: ent.tapWindowMs,
    idle,
  });
  return { store, gate, close: unwatch };
}
