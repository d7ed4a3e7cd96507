/**
 * What the control socket's commands need of the running unit (ConsoleUnit), and the reader of a text
 * argument they share (`badArgs` when it is not text).
 */
import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import type { VenddConfig } from "../config/load.js";
import type { LogRing } from "../core/logRing.js";
import type { VendEngine } from "../engine/runner.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { CommandError } from "./control.js";
import type { DexReads } from "./dexReads.js";
import type { FleetStatus } from "./fleetLink.js";
import type { UnitStatus } from "./status.js";

/** What the commands need of the running unit. */
export interface ConsoleUnit {
  config: VenddConfig;
  /** The config file the daemon runs from (null: built in code, `config apply` unavailable). */
  configFile: string | null;
  env: NodeJS.ProcessEnv;
  journal: SqliteJournal;
  vmc: VendController;
  now(): number;
  status(): UnitStatus;
  engine(): VendEngine | null;
  beacon(): string;
  /** Out of service by the console (`reason`) or back (null). */
  setService(reason: string | null): Promise<void>;
  serviceReason(): string | null;
  logs: LogRing | null;
  restart(why: string): void;
  /** The fleet link's state; null (or absent) without a fleet link. */
  fleet?: () => FleetStatus | null;
  /** The DEX audit reads (issue 36); null (or absent) when DEX is not enabled. */
  dex?: () => DexReads | null;
  /** The check-in display (`screen`: what it shows now); absent in tests that need no screen. */
  display?: CheckinDisplay;
}

/** The text argument `key`; undefined when absent or null. */
export function str(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new CommandError("badArgs", `${key} must be text`);
  return v;
}
