/**
 * What every part of a running unit shares (part.ts): the config and devices, the one ServiceState, the
 * signal that aborts when the daemon stops, the fatal-error exit, the out-of-service requests that no single
 * part owns, and the hooks by which parts follow the engine (running, payments back, in service).
 */
import type { CheckinDisplay } from "../../../drivers/display/display.js";
import type { GpioPort } from "../../../drivers/gpio/port.js";
import type { NfcStation } from "../../../drivers/nfc/station.js";
import type { VendController } from "../../../drivers/vmc/controller.js";
import type { LoadedConfig, VenddConfig } from "../../config/load.js";
import { engineOptions } from "../../config/seams.js";
import type { Clock } from "../../core/clock.js";
import type { EngineOptions } from "../../engine/options.js";
import type { VendEngine } from "../../engine/runner.js";
import type { SqliteJournal } from "../../journal/sqlite.js";
import type { PaymentDriver } from "../../payment/driver.js";
import { type ConnectPolicy, DEFAULT_CONNECT_POLICY } from "../connect.js";
import { DEX_BUSY_REASON } from "../dexReads.js";
import { ServiceState } from "../serviceState.js";
import type { DaemonDeps } from "../types.js";

/** What the daemon opened for the unit; the unit closes them when it stops. */
export interface Devices {
  journal: SqliteJournal;
  payment: PaymentDriver;
  vmc: VendController;
  display: CheckinDisplay;
  gpio: GpioPort | null;
  /** An NFC station already created (tests reach the simulated reader through it); otherwise from config. */
  nfc?: NfcStation;
}

export type UnitDeps = DaemonDeps & { clock: Clock };

/**
 * Out of service by request, from more than one part: the technician console (`service out REASON`) and a
 * running DEX read (the machine's port is in use). Part of every recomputed reason, so neither the
 * console's `service in` nor a peripheral's change enables the cashless device mid-read.
 */
export class ServiceRequests {
  /** Out of service by the technician console, or null. */
  console: string | null = null;
  /** A DEX read is running. */
  dexBusy = false;

  dexReason(): string | null {
    return this.dexBusy ? DEX_BUSY_REASON : null;
  }
}

/** The moments of the engine's life other parts follow; listeners run in the order the parts started. */
export class EngineHooks {
  private readonly running: ((e: VendEngine) => Promise<void>)[] = [];
  private readonly back: (() => void)[] = [];
  private readonly serving: ((e: VendEngine) => void)[] = [];

  /** The engine runs (members only, or in service): each listener is waited for in turn. */
  onRunning(listener: (e: VendEngine) => Promise<void>): void {
    this.running.push(listener);
  }
  /** A members-only engine has the payment service back. */
  onPaymentsBack(listener: () => void): void {
    this.back.push(listener);
  }
  /** The engine is in service with the payment service (the unit's steady state). */
  onInService(listener: (e: VendEngine) => void): void {
    this.serving.push(listener);
  }

  async emitRunning(e: VendEngine): Promise<void> {
    for (const listener of this.running) await listener(e);
  }
  emitPaymentsBack(): void {
    for (const listener of this.back) listener();
  }
  emitInService(e: VendEngine): void {
    for (const listener of this.serving) listener(e);
  }
}

export interface UnitContext {
  loaded: LoadedConfig;
  config: VenddConfig;
  deps: UnitDeps;
  devices: Devices;
  clock: Clock;
  logger: DaemonDeps["logger"];
  random: () => number;
  policy: ConnectPolicy;
  options: EngineOptions;
  state: ServiceState;
  /** Aborted when the daemon stops (the service part aborts it). */
  stopping: AbortController;
  requests: ServiceRequests;
  hooks: EngineHooks;
  /** A fatal error: logged, and the daemon's `failed` resolves with it (`vendd run` exits non-zero). */
  fail(err: unknown): void;
  /** Resolves with the first fatal error. */
  failed: Promise<Error>;
}

export function createUnitContext(loaded: LoadedConfig, deps: UnitDeps, devices: Devices): UnitContext {
  const { config } = loaded;
  const { clock, logger } = deps;
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });
  return {
    loaded,
    config,
    deps,
    devices,
    clock,
    logger,
    random: deps.random ?? Math.random,
    policy: { ...DEFAULT_CONNECT_POLICY, ...deps.policy },
    options: engineOptions(config),
    state: new ServiceState({
      unitId: config.unit.id,
      clock,
      notifier: deps.notifier,
      display: devices.display,
    }),
    stopping: new AbortController(),
    requests: new ServiceRequests(),
    hooks: new EngineHooks(),
    fail(err: unknown) {
      const error = err instanceof Error ? err : new Error(String(err));
      logger.fatal({ err: error }, "the unit cannot run");
      fail(error);
    },
    failed,
  };
}
