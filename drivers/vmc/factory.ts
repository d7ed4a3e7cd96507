import type { Logger } from "pino";
import type { VenddConfig } from "../../src/config/load.js";
import type { Clock } from "../../src/core/clock.js";
import type { GpioPort } from "../gpio/port.js";
import type { VendController } from "./controller.js";

export interface VmcFactoryDeps {
  clock: Clock;
  logger: Logger;
  /**
   * The GPIO port for the `pulse` driver (the controller opens and closes it). Default: a new port from
   * the config's `gpio` section (the board's IO plugin). A simulation passes its sim port to drive inputs.
   */
  gpio?: GpioPort;
}

/** The configuration cannot give a vend controller (code `config`). */
export class VmcConfigError extends Error {
  override readonly name = "VmcConfigError";
  readonly code = "config";
}

/**
 * Creates the vend controller named by `vmc.driver`. Serial and GPIO code is imported only in its own case,
 * so a laptop, CI and the demo never load a native module they do not use.
 */
export async function createVendController(
  config: VenddConfig,
  deps: VmcFactoryDeps,
): Promise<VendController> {
  const vmc = config.vmc;
  switch (vmc.driver) {
    case "sim": {
      const { SimVmc } = await import("./sim.js");
      return new SimVmc({ clock: deps.clock });
    }
    case "mdb-adapter": {
      if (vmc.device === null) throw new VmcConfigError("vmc.device is required for the mdb-adapter driver");
      const { createAdapterController } = await import("./adapter/controller.js");
      return createAdapterController({
        path: vmc.device,
        baudRate: vmc.baudRate,
        currencyCode: config.currency,
        decimals: vmc.decimals,
        commandTimeoutMs: vmc.commandTimeoutMs,
        linkTimeoutMs: vmc.linkTimeoutMs,
        clock: deps.clock,
        logger: deps.logger.child({ component: "vmc" }),
      });
    }
    case "pulse": {
      // The pins, timing and price come from the board profile (boards/) and the config's `pulse` section.
      const { gpioOptions, pulseOptions } = await import("../../src/config/devices.js");
      const { createPulseController } = await import("./pulse/controller.js");
      const deviceDeps = { clock: deps.clock, logger: deps.logger };
      let gpio = deps.gpio;
      if (gpio === undefined) {
        const { createGpio } = await import("../gpio/factory.js");
        gpio = await createGpio(gpioOptions(config, deviceDeps));
      }
      try {
        return createPulseController(pulseOptions(config, gpio, deviceDeps));
      } catch (err) {
        throw new VmcConfigError(`pulse: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    default:
      throw new VmcConfigError(
        `unknown vmc driver ${JSON.stringify(String(vmc.driver))}; valid: sim, mdb-adapter, pulse`,
      );
  }
}
