/**
 * Starts the control socket for a running unit and, after a `config apply`, judges the new config: in
 * service within `console.applyHealthSeconds` commits its version (journal meta and audit log), otherwise
 * the last good config is restored and the daemon restarts.
 */
import type { Logger } from "pino";
import type { VenddConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import { defaultControlSocket } from "../core/control.js";
import { parsePinHash } from "../core/pin.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { clearMarker, type PendingApply, rollBack } from "./configApply.js";
import { ControlServer } from "./control.js";
import { type ConsoleUnit, consoleCommands } from "./controlCommands.js";
import type { UnitStatus } from "./status.js";

export function controlSocketPath(config: VenddConfig): string {
  return config.console.socket ?? defaultControlSocket(config.journal.path);
}

/** Starts the server; a socket that cannot be served is logged, the unit runs on without it. */
export async function startControl(
  unit: ConsoleUnit,
  deps: { clock: Clock; logger: Logger },
): Promise<ControlServer | null> {
  const { config } = unit;
  const logger = deps.logger.child({ component: "control" });
  const parsed = config.console.pinHash === null ? null : parsePinHash(config.console.pinHash);
  try {
    return await ControlServer.start({
      path: controlSocketPath(config),
      clock: deps.clock,
      logger,
      store: unit.journal.console(),
      pinHash: parsed === null || typeof parsed === "string" ? null : parsed,
      badges: config.nfc.badges,
      idleMs: config.console.idleTimeoutMinutes * 60_000,
      commands: consoleCommands(unit),
    });
  } catch (err) {
    logger.error({ err }, "control socket unavailable: no technician console");
    return null;
  }
}

/**
 * Watches the first start after a `config apply`. Returns the function that stops watching.
 */
export function judgeApply(
  pending: PendingApply,
  deps: {
    file: string;
    clock: Clock;
    logger: Logger;
    journal: SqliteJournal;
    healthMs: number;
    status(): UnitStatus;
    onStatus(listener: (s: UnitStatus) => void): () => void;
    restart(why: string): void;
  },
): () => void {
  const store = deps.journal.console();
  let done = false;
  const finish = (ok: boolean) => {
    if (done) return;
    done = true;
    off();
    timer.cancel();
    if (ok) {
      clearMarker(deps.file);
      if (pending.version >= 0) store.setMeta("config_version", String(pending.version));
      store.audit("vendd", `config apply version ${pending.version}`, "committed: in service");
      deps.logger.info({ version: pending.version }, "config apply committed: the unit is in service");
      return;
    }
    rollBack(deps.file);
    store.audit("vendd", `config apply version ${pending.version}`, "rolled back: not in service in time");
    deps.logger.error(
      { version: pending.version, healthMs: deps.healthMs },
      "config apply rolled back: the unit did not go in service in time; restarting with the last good config",
    );
    deps.restart("config apply rolled back");
  };
  const off = deps.onStatus((s) => {
    if (s.inService) finish(true);
  });
  const timer = deps.clock.setTimer(deps.healthMs, () => finish(false));
  if (deps.status().inService) finish(true);
  return () => {
    done = true;
    off();
    timer.cancel();
  };
}
