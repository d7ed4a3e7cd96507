import { type Clock, systemClock } from "../../core/clock.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import type { PaymentDriver } from "../driver.js";
import { createLegacyDriver, type LegacyDriverOptions } from "./driver.js";

/** A customer who pays (sandbox test user, pos-v10 §17). */
export const PAYER = "+4520031801";
export const UNIT = "123456789012345";
export const POS_ID = "vend-unit-7";

/** A running emulator and a legacy driver pointed at it over loopback HTTP. */
export interface LegacyTestWorld {
  emu: Emulator;
  driver: PaymentDriver;
  /** Order ids the fake journal claims (busy-PoS recovery). */
  owned: Set<string>;
  /** Another driver on the same emulator (a second PoS or another unit's view). */
  driverWith(over: Partial<LegacyDriverOptions>): PaymentDriver;
  /** Ledger entries as `[kind, id, amount]`. */
  ledger(): [string, string, number][];
  /** The payer checks in on the unit and accepts. */
  pay(): void;
  close(): Promise<void>;
}

export async function legacyTestWorld(over: Partial<LegacyDriverOptions> = {}): Promise<LegacyTestWorld> {
  const emu = await startEmulator();
  const owned = new Set<string>();
  // Sign with emulator time (pos-legacy §3: ±300 s of emulator time).
  const clock: Clock = {
    now: () => emu.clock.now(),
    setTimer: systemClock.setTimer,
    sleep: systemClock.sleep,
  };
  const drivers: PaymentDriver[] = [];
  const driverWith = (o: Partial<LegacyDriverOptions>): PaymentDriver => {
    const d = createLegacyDriver({
      baseUrl: emu.info.legacy.baseUrl,
      apiVersion: "V08",
      merchantId: emu.info.legacy.merchantId,
      locationId: emu.info.legacy.locationId,
      posId: POS_ID,
      posUnitId: UNIT,
      posName: "Machine 7",
      bulkRef: "M7",
      captureType: "full",
      apiKey: emu.info.legacy.apiKey,
      merchantKey: emu.info.legacy.merchantKey,
      requestTimeoutMs: 1000,
      clock,
      ownsOrder: (id) => owned.has(id),
      ...over,
      ...o,
    });
    drivers.push(d);
    return d;
  };
  const driver = driverWith({});
  return {
    emu,
    driver,
    owned,
    driverWith,
    ledger: () => emu.ledger().map((e) => [e.kind, e.id, e.amount]),
    pay() {
      const c = emu.userSimulation.checkin(UNIT, PAYER);
      const a = emu.userSimulation.accept(UNIT, PAYER);
      if (c.status !== 200 || a.status !== 200)
        throw new Error(`user simulation failed: ${c.status} ${a.status}`);
    },
    async close() {
      for (const d of drivers) await d.close();
      await emu.close();
    },
  };
}
