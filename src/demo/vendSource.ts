import type { Logger } from "pino";
import { createSimGpio, type SimGpio } from "../../drivers/gpio/sim.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import type { MachineDex } from "../../drivers/vmc/simulator/dexPort.js";
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
  /**
   * The machine's DEX port (`vendd demo --dex`): its EVA-DTS audit counters follow the vends the machine
   * delivers; null without `dexLinkPath`.
   */
  dex: MachineDex | null;
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
  deps: { clock: Clock; logger: Logger; pty?: boolean; dexLinkPath?: string },
): Promise<VendSource> {
  if (config.vmc.driver === "sim" && deps.pty === true) return ptyCatalogSource(config, deps);
  if (config.vmc.driver === "sim") {
    const vmc = new SimVmc({ clock: deps.clock, dispenseMs: 600 });
    const dex = deps.dexLinkPath === undefined ? null : await simMachineDex(vmc, deps.dexLinkPath);
    return catalogSource(vmc, dex);
  }
  if (deps.dexLinkPath !== undefined)
    throw new DemoBoardError(`the demo's DEX port needs the sim board; board ${config.board} has none`);
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

/**
 * The in-process machine's DEX port on a PTY linked at `linkPath` (socat): each vend the SimVmc delivers
 * (VEND SUCCESS of an approved cashless vend) counts as cashless 1 in its audit counters, as the PTY
 * machine of `vendd sim-vmc --dex-port` does (drivers/vmc/simulator/dexPort.ts).
 */
async function simMachineDex(vmc: SimVmc, linkPath: string): Promise<MachineDex> {
  const { startMachineDex } = await import("../../drivers/vmc/simulator/dexPort.js");
  const dex = await startMachineDex({ linkPath, currencyNumeric: DEX_CURRENCY });
  vmc.onEvent((e) => {
    if (e.type !== "vendSucceeded") return;
    const vend = vmc.vends.at(-1);
    if (vend?.result === "delivered") dex.cashlessVend(vend.item, vend.price);
  });
  return dex;
}

/** ID402 of the demo machine's audit file: ISO 4217 numeric 208 (DKK, the demo's currency) with its leading 1. */
const DEX_CURRENCY = "1208";

function catalogSource(vmc: SimVmc, dex: MachineDex | null): VendSource {
  return {
    vmc,
    gpio: null,
    dex,
    async close() {
      await vmc.close();
      await dex?.close();
    },
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
    dex: null,
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
  deps: { clock: Clock; logger: Logger; dexLinkPath?: string },
): Promise<VendSource> {
  const { startVmcSimulator } = await import("../../drivers/vmc/simulator/index.js");
  const { createAdapterController } = await import("../../drivers/vmc/adapter/controller.js");
  // Line amounts are in currency units (vending-mdb §2), whatever the machine's MDB decimals.
  // With a DEX port, the simulator counts each VEND SUCCESS it sends in the machine's audit (sim-vmc --dex-port).
  const sim = await startVmcSimulator({
    ackRate: 20,
    decimals: CURRENCY_DECIMALS,
    ...(deps.dexLinkPath === undefined
      ? {}
      : { dex: { linkPath: deps.dexLinkPath, currencyNumeric: DEX_CURRENCY } }),
  });
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
    dex: sim.dex,
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
