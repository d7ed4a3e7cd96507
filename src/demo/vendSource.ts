import type { Logger } from "pino";
import type { VenddConfig } from "../../config/load.js";
import { createSimGpio, type SimGpio } from "../../drivers/gpio/sim.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import type { Clock } from "../core/clock.js";
import { CATALOG } from "./catalog.js";

/** The demo's simulated machine and the customer's way of asking it for a vend. */
export interface VendSource {
  vmc: VendController;
  /**
   * The customer asks for one vend. Returns false when the machine took no request (busy); the demo then
   * waits a little and asks again.
   */
  request(random: () => number): boolean;
  /** The simulated GPIO the pulse machine is wired to (what the pulses look like); null for the sim machine. */
  gpio: SimGpio | null;
}

export class DemoBoardError extends Error {
  override readonly name = "DemoBoardError";
  readonly code = "unsupported_board";
}

/**
 * The vend source for the demo's board: the `sim` machine with its catalog (the customer picks a random
 * product), or the pulse controller on the simulated GPIO (the customer presses the start button and the
 * machine asks for its one configured price). Boards with real hardware are refused.
 */
export async function createVendSource(
  config: VenddConfig,
  deps: { clock: Clock; logger: Logger },
): Promise<VendSource> {
  if (config.vmc.driver === "sim") return catalogSource(new SimVmc({ clock: deps.clock, dispenseMs: 600 }));
  if (config.vmc.driver === "pulse" && config.gpio.kind === "sim" && config.pulse.pins.start !== null) {
    const gpio = createSimGpio({ clock: deps.clock });
    const vmc = await createVendController(config, { clock: deps.clock, logger: deps.logger, gpio });
    return startButtonSource(vmc, gpio, config.pulse.pins.start);
  }
  throw new DemoBoardError(
    `the demo needs a simulated board (sim, sim-pulse); board ${config.board} uses ${config.vmc.driver} on ${config.gpio.kind} GPIO`,
  );
}

function catalogSource(vmc: SimVmc): VendSource {
  return {
    vmc,
    gpio: null,
    request(random) {
      const product = CATALOG[Math.floor(random() * CATALOG.length)] ?? CATALOG[0];
      return product !== undefined && vmc.requestVend(product.item, product.price);
    },
  };
}

/** A press is the level going low then back high (a switch to ground with the pull-up on). */
function startButtonSource(vmc: VendController, gpio: SimGpio, startPin: number | string): VendSource {
  let requested = false;
  vmc.onEvent((e) => {
    if (e.type === "vendRequested") requested = true;
  });
  return {
    vmc,
    gpio,
    request() {
      requested = false;
      gpio.setInput(startPin, false);
      gpio.setInput(startPin, true);
      // The pulse controller emits vendRequested synchronously on the press when it can take one.
      return requested;
    },
  };
}
