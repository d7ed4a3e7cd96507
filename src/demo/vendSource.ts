import type { Logger } from "pino";
import { createSimGpio, type SimGpio } from "../../drivers/gpio/sim.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import type { VenddConfig } from "../config/load.js";
import { CURRENCY_DECIMALS } from "../config/schema-price.js";
import { vmcOptions } from "../config/seams.js";
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
  /** Releases what the source opened (the PTY and its serial port). */
  close(): Promise<void>;
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
  deps: { clock: Clock; logger: Logger; pty?: boolean },
): Promise<VendSource> {
  if (config.vmc.driver === "sim" && deps.pty === true) return ptyCatalogSource(config, deps);
  if (config.vmc.driver === "sim") return catalogSource(new SimVmc({ clock: deps.clock, dispenseMs: 600 }));
  if (config.vmc.driver === "pulse" && config.gpio.kind === "sim" && config.pulse.pins.start !== null) {
    const gpio = createSimGpio({ clock: deps.clock });
    const vmc = await createVendController(vmcOptions(config), {
      clock: deps.clock,
      logger: deps.logger,
      gpio,
    });
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
    close: () => vmc.close(),
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
    close: () => vmc.close(),
    request() {
      requested = false;
      gpio.setInput(startPin, false);
      gpio.setInput(startPin, true);
      // The pulse controller emits vendRequested synchronously on the press when it can take one.
      return requested;
    },
  };
}

/**
 * The catalog machine behind a cashless adapter on a real pseudo-terminal (socat): the unit drives it with
 * the mdb-adapter driver over serialport, so the demo exercises the real serial stack. The machine delivers
 * each approved product after 0.6 s.
 */
async function ptyCatalogSource(
  config: VenddConfig,
  deps: { clock: Clock; logger: Logger },
): Promise<VendSource> {
  const { startVmcSimulator } = await import("../../drivers/vmc/simulator/index.js");
  const { createAdapterController } = await import("../../drivers/vmc/adapter/controller.js");
  // Line amounts are in currency units (vending-mdb §2), whatever the machine's MDB decimals.
  const sim = await startVmcSimulator({ ackRate: 20, decimals: CURRENCY_DECIMALS });
  const vmc = createAdapterController({
    path: sim.devicePath,
    currencyCode: config.currency,
    decimals: CURRENCY_DECIMALS,
    clock: deps.clock,
    logger: deps.logger.child({ component: "vmc" }),
  });
  sim.onCommand((line) => {
    if (!/^C,VEND,\d/.test(line)) return;
    deps.clock.setTimer(600, () => {
      if (sim.reader === "approved") sim.dispenseSuccess();
    });
  });
  return {
    vmc,
    gpio: null,
    async close() {
      await vmc.close();
      await sim.close();
    },
    request(random) {
      if (sim.reader !== "enabled") return false;
      const product = CATALOG[Math.floor(random() * CATALOG.length)] ?? CATALOG[0];
      if (product === undefined) return false;
      sim.vend(product.item, product.price);
      return true;
    },
  };
}
