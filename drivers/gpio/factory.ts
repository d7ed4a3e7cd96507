import type { JohnnyFiveGpioOptions } from "./johnny-five.js";
import type { GpioKind, GpioPort } from "./port.js";
import { GpioError } from "./port.js";
import type { SimGpioOptions } from "./sim.js";

export type GpioOptions =
  | ({ kind: "sim" } & SimGpioOptions)
  | ({ kind: "johnny-five" } & JohnnyFiveGpioOptions);

const KINDS: readonly GpioKind[] = ["sim", "johnny-five"];

/**
 * Creates the GPIO port the board profile names. Each implementation is imported only in its own case;
 * johnny-five itself is imported later still, by the port's `open`.
 * @throws GpioError `config` for a kind outside `sim | johnny-five` (unchecked config).
 */
export async function createGpio(opts: GpioOptions): Promise<GpioPort> {
  switch (opts.kind) {
    case "sim": {
      const { createSimGpio } = await import("./sim.js");
      return createSimGpio(opts);
    }
    case "johnny-five": {
      const { createJohnnyFiveGpio } = await import("./johnny-five.js");
      return createJohnnyFiveGpio(opts);
    }
    default: {
      const kind: unknown = (opts as { kind: unknown }).kind;
      throw new GpioError("config", `unknown gpio kind ${JSON.stringify(kind)}; valid: ${KINDS.join(", ")}`);
    }
  }
}
