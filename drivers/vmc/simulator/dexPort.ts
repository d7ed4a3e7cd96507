/**
 * The simulated machine's DEX port (issue 36): one simulated vending machine owns both ports, the MDB side
 * (the cashless adapter and VMC of this folder) and the DEX side (drivers/dex/simulator on a second PTY).
 * Every vend the VMC completes moves the machine's audit counters: a cashless vend the unit approved (VEND
 * SUCCESS) counts as cashless 1 (DA), a cash vend the machine makes by itself as cash (CA); PA per
 * selection (the MDB item number) and VA totals follow both. Faults of the machine's own accounting model the
 * reconciliation's differences: a cashless vend by another device the unit never hears of, a vend the
 * machine does not count, cash it does not keep.
 */
import type { Minor } from "../../../src/core/money.js";
import { type DexSimulator, startDexSimulator } from "../../dex/simulator/index.js";

export interface MachineDexOptions {
  /** Make the DEX PTY linked here (socat), or attach to an existing tty. */
  linkPath?: string;
  attach?: string;
  role?: "slave" | "master";
  /** The machine's DEX communication id (DXS, DA1); default SIM0000001. */
  commId?: string;
  /** ID402: ISO 4217 numeric with the leading 1 (`1978` EUR, `1208` DKK); default EUR. */
  currencyNumeric?: string;
}

export interface MachineDexFaults {
  /** The next N cashless vends the VMC completes are not counted in DEX (a captured payment, no vend). */
  uncounted: number;
}

/** The DEX side of a simulated machine whose MDB side is a VmcSimulator. */
export interface MachineDex {
  readonly sim: DexSimulator;
  readonly faults: MachineDexFaults;
  /** The VMC delivered an approved cashless vend (called by the MDB side at VEND SUCCESS). */
  cashlessVend(item: number, price: Minor): void;
  /**
   * The machine sells `item` for cash by itself (no cashless session): it counts a cash vend and keeps
   * `cashIn` (default: the price; less is a cash shortfall).
   */
  cashVend(item: number, price: Minor, cashIn?: Minor): void;
  /** A cashless vend paid through another device on the machine: DEX counts it, the unit never sees it. */
  otherCashlessVend(item: number, price: Minor): void;
  close(): Promise<void>;
}

/** Starts the DEX port of the machine; its selections are learnt from the MDB item numbers vended. */
export async function startMachineDex(opts: MachineDexOptions): Promise<MachineDex> {
  const commId = opts.commId ?? "SIM0000001";
  const sim = await startDexSimulator({
    ...(opts.attach !== undefined ? { attach: opts.attach } : {}),
    ...(opts.linkPath !== undefined ? { linkPath: opts.linkPath } : {}),
    role: opts.role ?? "slave",
    machine: {
      commId,
      serial: "SIM000000001",
      selections: [],
      ...(opts.currencyNumeric === undefined ? {} : { currencyNumeric: opts.currencyNumeric }),
    },
  });
  const faults: MachineDexFaults = { uncounted: 0 };
  const count = (item: number, device: "CA" | "DA", price: Minor, cashIn?: Minor) =>
    sim.machine.vend(String(item), device, price, cashIn, true);
  return {
    sim,
    faults,
    cashlessVend(item, price) {
      if (faults.uncounted > 0) {
        faults.uncounted--;
        return;
      }
      count(item, "DA", price);
    },
    cashVend: (item, price, cashIn) => count(item, "CA", price, cashIn ?? price),
    otherCashlessVend: (item, price) => count(item, "DA", price),
    close: () => sim.close(),
  };
}
