/**
 * Starts the DEX reads for a running unit when the config enables them (issue 36): the reader on
 * `dex.device`, opened at the first read and kept open (it answers a machine that opens a session by
 * itself), VMC activity for the quiet gate, and the engine's out-of-service for the read's duration.
 */
import type { Logger } from "pino";
import type { VendController } from "../../drivers/vmc/controller.js";
import type { VenddConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { DexReads } from "./dexReads.js";

export interface DexUnitDeps {
  config: VenddConfig;
  clock: Clock;
  logger: Logger;
  journal: SqliteJournal;
  vmc: VendController;
  engineIdle(): boolean;
  setBusy(busy: boolean): Promise<void>;
}

export function startDexReads(deps: DexUnitDeps): DexReads | null {
  const { config, clock } = deps;
  if (!config.dex.enabled || config.dex.device === null) return null;
  const device = config.dex.device;
  const logger = deps.logger.child({ component: "dex" });
  const reads = new DexReads({
    config: config.dex,
    clock,
    logger,
    store: {
      record: (read) => deps.journal.recordDexRead(read),
      last: () => deps.journal.dex().last(),
      lastPush: () => deps.journal.dex().lastPush(),
    },
    async openReader() {
      const { DexReader } = await import("../../drivers/dex/reader.js");
      return DexReader.open({
        path: device,
        commId: config.dex.commId,
        clock,
        attempts: config.dex.attempts,
        onPush: (r) =>
          reads.recordPush(r.ok ? { ok: true, data: r.session.data } : { ok: false, error: r.error.message }),
      });
    },
    engineIdle: deps.engineIdle,
    setBusy: deps.setBusy,
    onVmcActivity: (listener) => deps.vmc.onEvent((e) => listener(e)),
  });
  reads.start();
  return reads;
}
