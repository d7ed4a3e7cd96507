import type { Logger } from "pino";
import type { Clock } from "../../src/core/clock.js";
import { unknownKind } from "../../src/core/seams.js";
import type { GpioOptions } from "../gpio/factory.js";
import type { GpioPort } from "../gpio/port.js";
import type { AdapterControllerOptions } from "./adapter/options.js";
import type { VendController } from "./controller.js";
import type { PulseControllerOptions } from "./pulse/options.js";
import type { SimVmcOptions } from "./sim.js";

/**
 * What the vend controller is (plain data, from src/config/seams.ts): the kind and that kind's settings.
 * `pulse` carries the options of the GPIO port it opens when the caller gives none (`port`).
 */
export type VmcOptions =
  | ({ kind: "sim" } & Omit<SimVmcOptions, "clock" | "outcome">)
  | ({ kind: "mdb-adapter" } & Omit<AdapterControllerOptions, "clock" | "logger" | "binding" | "dialect">)
  | ({ kind: "pulse"; port: GpioOptions } & Omit<PulseControllerOptions, "gpio" | "clock" | "logger">);

export type VmcKind = VmcOptions["kind"];

/** The controller's collaborators. */
export interface VmcDeps {
  clock: Clock;
  logger: Logger;
  /**
   * The GPIO port for the `pulse` kind (the controller opens and closes it). Default: a new port from the
   * options' `port`. The daemon passes the unit's one port; a simulation passes its sim port to drive inputs.
   */
  gpio?: GpioPort;
}

export const VMC_KINDS: readonly VmcKind[] = ["sim", "mdb-adapter", "pulse"];

/**
 * Creates the vend controller the options name. Serial and GPIO code is imported only in its own case, so
 * a laptop, CI and the demo never load a native module they do not use.
 * @throws SeamConfigError for a kind outside `sim | mdb-adapter | pulse` (unchecked input).
 */
export async function createVendController(options: VmcOptions, deps: VmcDeps): Promise<VendController> {
  switch (options.kind) {
    case "sim": {
      const { SimVmc } = await import("./sim.js");
      const { kind: _kind, ...sim } = options;
      return new SimVmc({ ...sim, clock: deps.clock });
    }
    case "mdb-adapter": {
      const { createAdapterController } = await import("./adapter/controller.js");
      const { kind: _kind, ...adapter } = options;
      return createAdapterController({
        ...adapter,
        clock: deps.clock,
        logger: deps.logger.child({ component: "vmc" }),
      });
    }
    case "pulse": {
      const { createPulseController } = await import("./pulse/controller.js");
      const { kind: _kind, port, ...pulse } = options;
      let gpio = deps.gpio;
      if (gpio === undefined) {
        const { createGpio } = await import("../gpio/factory.js");
        gpio = await createGpio(port, { clock: deps.clock, logger: deps.logger });
      }
      return createPulseController({
        ...pulse,
        gpio,
        clock: deps.clock,
        logger: deps.logger.child({ component: "vmc" }),
      });
    }
    default:
      throw unknownKind("vmc", options, VMC_KINDS);
  }
}
