import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { createDisplay } from "../../drivers/display/factory.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import type { LoadedConfig, VenddConfig } from "../config/load.js";
import {
  displayOptions,
  engineOptions,
  gpioOptions,
  journalOptions,
  paymentOptions,
  vmcOptions,
} from "../config/seams.js";
import { type Clock, systemClock } from "../core/clock.js";
import { type FaultPoints, NO_FAULTS } from "../core/faults.js";
import type { Notifier } from "../core/sdnotify.js";
import { createEngine } from "../engine/factory.js";
import { recoverSessions } from "../engine/recovery.js";
import type { VendEngine } from "../engine/runner.js";
import { createJournal } from "../journal/factory.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { PaymentDriver } from "../payment/driver.js";
import { createPaymentDriver } from "../payment/factory.js";
import { startHousekeeping } from "./housekeeping.js";
import { startPeripherals } from "./peripherals.js";

/** Housekeeping interval: sweeper and WAL checkpoint at idle (reliability.md §1.3), ms. */
const HOUSEKEEPING_MS = 60_000;

export interface DaemonDeps {
  logger: Logger;
  notifier: Notifier;
  clock?: Clock;
  /** Crash points for the crash tests (default none; `vendd run` arms them from VENDD_FAULT_POINT). */
  faults?: FaultPoints;
}

export interface Daemon {
  engine: VendEngine;
  journal: SqliteJournal;
  stop(): Promise<void>;
}

/**
 * Starts the unit: opens the journal (the one writer), creates the drivers from config, resolves every
 * unresolved session with the payment service, and only then enables the VMC and reports READY.
 */
export async function startDaemon(loaded: LoadedConfig, deps: DaemonDeps): Promise<Daemon> {
  const { config, secrets } = loaded;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger;
  const journal = createJournal(journalOptions(config), { clock });
  let payment: PaymentDriver | null = null;
  let vmc: VendController | null = null;
  let display: CheckinDisplay | null = null;
  let gpio: GpioPort | null = null;
  try {
    payment = await createPaymentDriver(paymentOptions(config, secrets), {
      clock,
      logger,
      ownsOrder: (orderId) => journal.ownsLiveOrder(orderId),
    });
    display = await createDisplay(displayOptions(config), { logger });
    gpio = await openGpio(config, clock, logger);
    vmc = await createVendController(vmcOptions(config), {
      clock,
      logger,
      ...(gpio === null ? {} : { gpio }),
    });
    const options = engineOptions(config);
    const stopping = new AbortController();
    const recoveryLogger = logger.child({ component: "recovery" });
    const p0 = payment;
    const recover = async () => {
      const report = await recoverSessions(
        journal,
        { payment: p0, clock, logger: recoveryLogger, signal: stopping.signal },
        {
          unknownOutcome: options.unknownOutcome,
          paymentMode: options.paymentMode,
          captureType: options.captureType,
        },
      );
      if (report.resolved.length + report.pending.length > 0)
        recoveryLogger.warn({ report }, "unresolved sessions");
    };
    // Every unresolved session is settled before the VMC is enabled (reliability.md §2.1 step 4). The
    // driver must be open first: recovery queries the service (lookups need the PoS identity).
    const identity = await payment.open(stopping.signal);
    await recover();
    const engine = createEngine(options, {
      payment,
      vmc,
      display,
      journal,
      clock,
      logger: logger.child({ component: "engine" }),
      faults: deps.faults ?? NO_FAULTS,
    });
    await engine.start(identity);
    const peripherals = await startPeripherals(config, { clock, logger, engine, gpio });
    deps.notifier.ready(`in service as ${config.unit.id}`);
    const stopWatchdog = deps.notifier.startWatchdog();
    const housekeeping = startHousekeeping({
      clock,
      intervalMs: HOUSEKEEPING_MS,
      signal: stopping.signal,
      logger: logger.child({ component: "housekeeping" }),
      idle: () => engine.current.tag === "idle",
      // The sweeper: settles sessions left unsettled, using only the journal's own decisions.
      sweep: recover,
      checkpoint: () => journal.checkpoint(),
      retain: () => journal.retain(clock.now() - config.journal.retentionDays * 86_400_000),
    });
    const p = payment;
    const v = vmc;
    const d = display;
    const g = gpio;
    return {
      engine,
      journal,
      async stop() {
        deps.notifier.stopping();
        stopping.abort(new Error("daemon stopping"));
        stopWatchdog();
        await housekeeping;
        await peripherals.close();
        await v.setEnabled(false).catch(() => {});
        await engine.stop();
        await v.close();
        await p.close();
        await d.close();
        if (config.vmc.driver !== "pulse") await g?.close().catch(() => {});
        journal.close();
      },
    };
  } catch (err) {
    await vmc?.close().catch(() => {});
    await payment?.close().catch(() => {});
    await display?.close().catch(() => {});
    journal.close();
    throw err;
  }
}

/**
 * One GPIO port for the whole unit, when the board uses GPIO (the pulse controller, or panel pins). The
 * pulse controller opens it itself; otherwise it is opened here. An unavailable port degrades the panel,
 * it does not stop the unit (unless the pulse controller needs it, which then fails to open).
 */
async function openGpio(config: VenddConfig, clock: Clock, logger: Logger): Promise<GpioPort | null> {
  const pins = config.gpio.pins;
  const panel = pins.statusLed !== null || pins.serviceButton !== null || pins.doorSwitch !== null;
  if (config.vmc.driver !== "pulse" && !panel) return null;
  const { createGpio } = await import("../../drivers/gpio/factory.js");
  const port = await createGpio(gpioOptions(config), { clock, logger });
  if (config.vmc.driver === "pulse") return port;
  try {
    await port.open();
    return port;
  } catch (err) {
    logger.warn({ err }, "GPIO unavailable: no status LED, service button or door switch");
    return null;
  }
}
