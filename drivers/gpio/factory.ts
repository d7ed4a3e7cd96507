import type { Logger } from "pino";
import type { Clock } from "../../src/core/clock.js";
import { unknownKind } from "../../src/core/seams.js";
import type { JohnnyFiveGpioOptions } from "./johnny-five.js";
import type { GpioKind, GpioPort } from "./port.js";
import type { SimGpioOptions } from "./sim.js";

/** What a GPIO port is (plain data, from src/config/seams.ts): the kind and that kind's settings. */
export type GpioOptions =
  | ({ kind: "sim" } & Omit<SimGpioOptions, "clock">)
  | ({ kind: "johnny-five" } & Omit<JohnnyFiveGpioOptions, "clock" | "logger">);

/** The port's collaborators. */
export interface GpioDeps {
  clock: Clock;
  logger?: Logger;
}

export const GPIO_KINDS: readonly GpioKind[] = ["sim", "johnny-five"];

/**
 * Creates the GPIO port the options name. Each implementation is imported only in its own case;
 * johnny-five itself is imported later still, by the port's `open`.
 * @throws SeamConfigError for a kind outside `sim | johnny-five` (unchecked input).
 */
export async function createGpio(options: GpioOptions, deps: GpioDeps): Promise<GpioPort> {
  switch (options.kind) {
    case "sim": {
      const { createSimGpio } = await import("./sim.js");
      const { kind: _kind, ...sim } = options;
      return createSimGpio({ ...sim, clock: deps.clock });
    }
    case "johnny-five": {
      const { createJohnnyFiveGpio } = await import("./johnny-five.js");
      const { kind: _kind, ...j5 } = options;
      return createJohnnyFiveGpio({
        ...j5,
        clock: deps.clock,
        ...(deps.logger ? { logger: deps.logger.child({ component: "gpio" }) } : {}),
      });
    }
    default:
      throw unknownKind("gpio", options, GPIO_KINDS);
  }
}
