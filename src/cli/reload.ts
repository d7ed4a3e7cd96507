/**
 * `vendd run` on SIGHUP (`systemctl reload vendd`: the unit file's ExecReload). Without a handler Node ends
 * the process on SIGHUP, so a reload used to be a crash and a restart. Now the config and secrets are read
 * and validated again: an invalid result is logged at error and ignored (the running config stays, as a
 * unit must keep selling); what can change without a restart is applied at once (`logging.level`, and the
 * console login: `console.pinHash`, `nfc.badges`, once the daemon runs); every other changed key is logged
 * at warn as needing a restart. Secret values never reach the log: a change of
 * secrets is reported as the key `secrets`, and new values are registered for scrubbing before any line.
 */
import type { Logger } from "pino";
import {
  ConfigError,
  type LoadedConfig,
  type LoadOptions,
  loadConfig,
  secretValues,
  toConfigInput,
  type VenddConfig,
} from "../config/load.js";
import type { SecretRegistry } from "../core/secrets.js";

/** Config keys a running unit applies on reload; a change of any other key takes effect after a restart. */
export const LIVE_KEYS: ReadonlySet<string> = new Set(["logging.level", "console.pinHash", "nfc.badges"]);

/** The live keys the running daemon applies (the console login); the logger's level is applied here. */
const LOGIN_KEYS: ReadonlySet<string> = new Set(["console.pinHash", "nfc.badges"]);

/**
 * Dotted paths of the values that differ between two configs as files hold them (derived fields removed,
 * so `engine.sessionMax` is reported once). Mappings are compared key by key; anything else, lists
 * included, as a whole.
 */
export function changedKeys(a: unknown, b: unknown, prefix = ""): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedKeys(a[k], b[k], prefix === "" ? k : `${prefix}.${k}`));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export interface ReloadOptions {
  /** The config file `vendd run` was started with, and how it was loaded (`--secrets`). */
  file: string;
  load: LoadOptions;
  /** What the daemon runs with now. */
  running: LoadedConfig;
  /** The process logger: its level is what `logging.level` changes. */
  logger: Logger;
  /** The logger's scrubbing registry: new secret values are added before anything is logged. */
  secrets: SecretRegistry;
  /**
   * The running daemon's login reload (`Daemon.reloadLogin`), null while it starts: a login change then
   * waits for a restart like any other key.
   */
  reloadLogin?: () => ((config: VenddConfig) => void) | null;
  /** Reads the config (default `loadConfig`); a test may count reads. */
  loadConfig?: typeof loadConfig;
}

/** What one reload did: the keys applied now and the keys that wait for a restart. */
export interface ReloadResult {
  status: "invalid" | "unchanged" | "changed";
  applied: string[];
  restartNeeded: string[];
}

/**
 * Returns the SIGHUP handler. Each call compares the file with what actually runs (the start-up config
 * plus the changes applied so far), so a key that needs a restart is reported again on every reload until
 * the unit is restarted.
 */
export function createReloader(opts: ReloadOptions): () => ReloadResult {
  const read = opts.loadConfig ?? loadConfig;
  let running = opts.running;
  return () => {
    const log = opts.logger;
    let next: LoadedConfig;
    try {
      next = read(opts.file, opts.load);
    } catch (err) {
      // A reload never stops the unit: whatever went wrong, the running configuration stays.
      log.error(
        err instanceof ConfigError ? { issues: err.issues } : { err },
        "reload: invalid configuration ignored; the unit keeps running with its current configuration",
      );
      return { status: "invalid", applied: [], restartNeeded: [] };
    }
    for (const value of secretValues(next.secrets)) opts.secrets.addSecret(value);
    for (const w of next.warnings) log.warn(w);
    const changed = changedKeys(toConfigInput(running.config), toConfigInput(next.config));
    const sameSecrets =
      JSON.stringify(secretValues(running.secrets)) === JSON.stringify(secretValues(next.secrets));
    const login = opts.reloadLogin?.() ?? null;
    const live = (k: string) => LIVE_KEYS.has(k) && (login !== null || !LOGIN_KEYS.has(k));
    const applied = changed.filter(live);
    const restartNeeded = [...changed.filter((k) => !live(k)), ...(sameSecrets ? [] : ["secrets"])];
    if (applied.includes("logging.level")) {
      log.level = next.config.logging.level;
      running = { ...running, config: { ...running.config, logging: next.config.logging } };
    }
    if (login !== null && applied.some((k) => LOGIN_KEYS.has(k))) {
      const config: VenddConfig = {
        ...running.config,
        console: { ...running.config.console, pinHash: next.config.console.pinHash },
        nfc: { ...running.config.nfc, badges: next.config.nfc.badges },
      };
      login(config);
      running = { ...running, config };
    }
    if (restartNeeded.length > 0) {
      log.warn(
        { keys: restartNeeded },
        "reload: these changes take effect only after a restart (systemctl restart vendd)",
      );
    }
    const status = applied.length + restartNeeded.length === 0 ? "unchanged" : "changed";
    log.info({ applied }, status === "unchanged" ? "reload: configuration unchanged" : "reload: applied");
    return { status, applied, restartNeeded };
  };
}
