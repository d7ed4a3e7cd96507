import type { Logger } from "pino";
import type { VenddConfig } from "../../config/load.js";
import type { Clock } from "../../src/core/clock.js";
import type { VendController } from "./controller.js";

export interface VmcFactoryDeps {
  clock: Clock;
  logger: Logger;
}

export class VmcConfigError extends Error {
  override readonly name = "VmcConfigError";
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
    case "pulse":
      throw new VmcConfigError("the pulse vend controller is configured through a board profile (boards/)");
    default:
      throw new VmcConfigError(
        `unknown vmc driver ${JSON.stringify(String(vmc.driver))}; valid: sim, mdb-adapter, pulse`,
      );
  }
}
