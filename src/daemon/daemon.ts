import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { createDisplay } from "../../drivers/display/factory.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import type { LoadedConfig, VenddConfig } from "../config/load.js";
import { displayOptions, gpioOptions, journalOptions, paymentOptions, vmcOptions } from "../config/seams.js";
import { type Clock, systemClock } from "../core/clock.js";
import { createJournal } from "../journal/factory.js";
import { describeRefusal } from "../journal/problems.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { PaymentDriver } from "../payment/driver.js";
import { createPaymentDriver } from "../payment/factory.js";
import { journalProblem, journalUnusable } from "./journalStart.js";
import type { Daemon, DaemonDeps } from "./types.js";
import { runUnit } from "./unit.js";

export type { Daemon, DaemonDeps } from "./types.js";

/**
 * Starts the unit and returns as soon as it is up: journal opened (the one writer), drivers created, the
 * "out of service" screen shown. Then, in the background: reach the payment service and settle every
 * unresolved session (retried with capped backoff and jitter while the service is down or refuses), and
 * only then enable the VMC. The unit never exits because the service is down or its journal is unusable:
 * it stays out of service and says why (screen, `status()`, the systemd STATUS line, the log).
 */
export async function startDaemon(loaded: LoadedConfig, deps: DaemonDeps): Promise<Daemon> {
  const { config, secrets } = loaded;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger;
  const stderr = deps.stderr ?? ((text: string) => process.stderr.write(text));
  let journal: SqliteJournal;
  try {
    journal = (deps.openJournal ?? createJournal)(journalOptions(config), { clock });
  } catch (err) {
    const problem = journalProblem(err, config.journal.path);
    // Another process owns the journal: refuse at once (`vendd run` exits non-zero with the message).
    if (problem.locked) throw err;
    const display = deps.devices?.display ?? (await openDisplay(config, logger));
    const now = () => clock.now();
    return journalUnusable(problem, {
      unitId: config.unit.id,
      logger,
      notifier: deps.notifier,
      display,
      stderr,
      now,
      refusal: describeRefusal(err),
    });
  }
  let payment: PaymentDriver | null = null;
  let vmc: VendController | null = null;
  let display: CheckinDisplay | null = null;
  let gpio: GpioPort | null = null;
  try {
    payment =
      deps.devices?.payment ??
      (await createPaymentDriver(paymentOptions(config, secrets), {
        clock,
        ...(deps.requestClock === undefined ? {} : { deadlineClock: deps.requestClock }),
        logger,
        ownsOrder: (orderId) => journal.ownsLiveOrder(orderId),
      }));
    display = deps.devices?.display ?? (await openDisplay(config, logger));
    gpio = await openGpio(config, clock, logger);
    vmc =
      deps.devices?.vmc ??
      (await createVendController(vmcOptions(config), {
        clock,
        logger,
        ...(gpio === null ? {} : { gpio }),
      }));
  } catch (err) {
    await vmc?.close().catch(() => {});
    await payment?.close().catch(() => {});
    await display?.close().catch(() => {});
    journal.close();
    throw err;
  }
  return runUnit(
    loaded,
    { ...deps, clock },
    {
      journal,
      payment,
      vmc,
      display,
      gpio,
      ...(deps.devices?.nfc === undefined ? {} : { nfc: deps.devices.nfc }),
    },
  );
}

async function openDisplay(config: VenddConfig, logger: Logger): Promise<CheckinDisplay> {
  return createDisplay(displayOptions(config), { logger });
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
