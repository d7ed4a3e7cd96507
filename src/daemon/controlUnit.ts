/**
 * Starts the control socket for a running unit, and journals the update applier's last outcome.
 */
import type { Logger } from "pino";
import type { BadgeEntry } from "../../drivers/nfc/badges.js";
import { loadConfig, type VenddConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import { defaultControlSocket } from "../core/control.js";
import { type ParsedPinHash, parsePinHash } from "../core/pin.js";
import { printable } from "../core/printable.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { readUpdateOutcome } from "../update/state.js";
import type { ConsoleUnit } from "./consoleUnit.js";
import { ControlServer, ControlSocketInUse, NO_LOGIN } from "./control.js";
import { consoleCommands } from "./controlCommands.js";

export function controlSocketPath(config: VenddConfig): string {
  return config.console.socket ?? defaultControlSocket(config.journal.path);
}

/** The console login of a config: the parsed PIN hash (null: none, or unusable) and the badges. */
export function loginOf(config: VenddConfig): {
  pinHash: ParsedPinHash | null;
  badges: readonly BadgeEntry[];
} {
  const parsed = config.console.pinHash === null ? null : parsePinHash(config.console.pinHash);
  return {
    pinHash: parsed === null || typeof parsed === "string" ? null : parsed,
    badges: config.nfc.badges,
  };
}

/**
 * What a login is told when the running config has no PIN and no badge: when the config file on disk
 * has one (added since the daemon read it), that the daemon has not read it yet and how to make it.
 */
function loginUnavailable(configFile: string | null): () => string {
  return () => {
    if (configFile === null) return NO_LOGIN;
    try {
      const onDisk = loginOf(loadConfig(configFile, { requireSecrets: false }).config);
      if (onDisk.pinHash !== null || onDisk.badges.length > 0)
        return `the config file ${printable(configFile, 120)} has a console PIN or badge the running daemon has not read yet: systemctl reload vendd, then log in again`;
    } catch {
      // An unreadable or invalid file: the running configuration is what counts.
    }
    return NO_LOGIN;
  };
}

/** Starts the server; a socket that cannot be served is logged, the unit runs on without it. */
export async function startControl(
  unit: ConsoleUnit,
  deps: { clock: Clock; logger: Logger },
): Promise<ControlServer | null> {
  const { config } = unit;
  const logger = deps.logger.child({ component: "control" });
  const login = loginOf(config);
  try {
    return await ControlServer.start({
      path: controlSocketPath(config),
      clock: deps.clock,
      logger,
      store: unit.journal.console(),
      ...login,
      loginUnavailable: loginUnavailable(unit.configFile),
      idleMs: config.console.idleTimeoutMinutes * 60_000,
      commands: consoleCommands(unit),
    });
  } catch (err) {
    if (err instanceof ControlSocketInUse) throw err;
    logger.error({ err }, "control socket unavailable: no technician console");
    return null;
  }
}

/**
 * Journals the update applier's last outcome (a bundle, or a console change) in the audit log, once per
 * outcome: the daemon reads the applier's state at start (src/update/state.ts). With a fleet link, an
 * applied or rolled-back bundle is also a `version` event in the outbox (a refused one changed nothing).
 */
export function auditUpdateOutcome(config: VenddConfig, journal: SqliteJournal, logger: Logger): void {
  const update = readUpdateOutcome(config.updates.stateDir);
  const o = update.outcome;
  if (o === null) return;
  try {
    const store = journal.console();
    if (store.meta("update_outcome_id") === o.id) return;
    // One transaction: the audit row, the mark, and the fleet's `version` event (with a fleet link).
    journal.atomically(() => {
      store.audit(
        `applier (${printable(o.source, 60)})`,
        `update ${o.kind ?? "bundle"} ${o.bundleId ?? ""} version ${o.version ?? "-"}`,
        `${o.result}${o.reason === null ? "" : `: ${printable(o.reason, 120)}`}`,
      );
      store.setMeta("update_outcome_id", o.id);
      if (o.kind !== null && o.result !== "refused")
        journal.report("version", {
          kind: o.kind,
          bundleId: o.bundleId === null ? null : printable(o.bundleId, 128),
          version: o.version === null ? "-" : String(o.version),
          outcome: o.result === "committed" ? "applied" : "rolledBack",
          reason: printable(o.reason ?? "", 500),
        });
    });
  } catch (err) {
    logger.error({ err }, "the update outcome could not be audited");
  }
}
