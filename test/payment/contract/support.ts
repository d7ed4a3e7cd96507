import pino from "pino";
import { buildConfig, type Secrets, type VenddConfig } from "../../../src/config/load.js";
import { paymentOptions } from "../../../src/config/seams.js";
import { type Clock, systemClock } from "../../../src/core/clock.js";
import type { Minor } from "../../../src/core/money.js";
import {
  emulatorLegacySettings,
  emulatorSecrets,
  emulatorV10Settings,
} from "../../../src/demo/emulatorSettings.js";
import { type Emulator, startEmulator } from "../../../src/emulator/index.js";
import type { LedgerKind } from "../../../src/emulator/types.js";
import type {
  PaymentDriver,
  PaymentObservation,
  PaymentRef,
  PosIdentity,
  StartRequest,
} from "../../../src/payment/driver.js";
import { createPaymentDriver } from "../../../src/payment/factory.js";
import { watchPayment } from "../../../src/payment/watch.js";

/**
 * Test fixture of the driver contract suite: one emulator on 127.0.0.1 port 0, units configured through
 * `buildConfig` (the schema a real unit loads) and drivers built by `createPaymentDriver` from the one
 * mapping (`paymentOptions`), exactly as the daemon builds them. A "restart" is a second `connect` of the
 * same unit: a new driver instance, nothing shared with the first but the configuration.
 */

export type DriverKind = "v10" | "legacy";

/** The parameter table of every contract `describe.each`. */
export const KINDS: [DriverKind][] = [["v10"], ["legacy"]];

/** Sandbox app users (pos-v10 §17, emulator README "Seeded data"). */
export const USERS = {
  credit: "+4520031801",
  noPartialCapture: "+4520031805",
  walksAway: "+4520031808",
} as const;

/** Emulator poll interval of the suite, ms (a test affordance; the real service never goes below 1000). */
export const POLL_DELAY_MS = 50;

export interface UnitTuning {
  /** V10 per-request timeouts, ms (config `payment.v10.timeouts`). */
  v10Timeouts?: { postMs: number; getMs: number };
  /** V10 retries of network errors and 5xx (config `payment.v10.retries`). */
  v10Retries?: { max: number; baseDelayMs: number; maxDelayMs: number };
  /** Older-interface per-request timeout, ms. */
  legacyTimeoutMs?: number;
  /** Older-interface default CaptureType. */
  captureType?: "full" | "partial";
  /** `checkin`: V10 PoS without `requirePaymentBeforeCheckin` (customers may check in first). */
  flow?: "selection" | "checkin";
}

/** One configured unit: the config and secrets a daemon would load, and its fake journal's live orders. */
export interface Unit {
  kind: DriverKind;
  config: VenddConfig;
  secrets: Secrets;
  /** Orders the unit's journal owns as live sessions (`ownsOrder`). */
  owned: Set<string>;
}

export interface Connected {
  driver: PaymentDriver;
  pos: PosIdentity;
}

/** A running emulator and the units configured against it. */
export interface ContractWorld {
  emu: Emulator;
  /** Reads emulator time (the older interface signs with it, pos-legacy §3); sleeps in real time. */
  clock: Clock;
  /** A fresh unit (its own V10 PoS / older-interface PoS and PoSUnitId). */
  unit(kind: DriverKind, tuning?: UnitTuning): Unit;
  /** Builds a NEW driver for `unit` through the factory and opens it (a daemon start or restart). */
  connect(unit: Unit): Promise<Connected>;
  /** Drops `c` (closes its driver, as a daemon stop does) and connects the unit again. */
  restart(unit: Unit, c: Connected): Promise<Connected>;
  /** Ledger of one order as `[kind, amount]`, in order. */
  ledger(orderId: string): [LedgerKind, Minor][];
  /** The customer checks in on the unit and accepts the payment (both answers must be 200). */
  pay(pos: PosIdentity, phone?: string): void;
  close(): Promise<void>;
}

const silent = pino({ level: "silent" });

export async function startContractWorld(): Promise<ContractWorld> {
  const emu = await startEmulator({ port: 0, host: "127.0.0.1", pollDelayMs: POLL_DELAY_MS });
  const clock: Clock = {
    now: () => emu.clock.now(),
    setTimer: (ms, fn) => systemClock.setTimer(ms, fn),
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
  };
  const drivers = new Set<PaymentDriver>();
  let units = 0;
  const connect = async (unit: Unit): Promise<Connected> => {
    const driver = await createPaymentDriver(paymentOptions(unit.config, unit.secrets), {
      clock,
      logger: silent,
      ownsOrder: (orderId) => unit.owned.has(orderId),
    });
    drivers.add(driver);
    return { driver, pos: await driver.open() };
  };
  return {
    emu,
    clock,
    unit(kind, tuning = {}) {
      units += 1;
      return { kind, ...unitConfig(emu, kind, units, tuning), owned: new Set() };
    },
    connect,
    async restart(unit, c) {
      drivers.delete(c.driver);
      await c.driver.close();
      return connect(unit);
    },
    ledger: (orderId) =>
      emu
        .ledger()
        .filter((e) => e.orderId === orderId)
        .map((e) => [e.kind, e.amount]),
    pay(pos, phone = USERS.credit) {
      const c = emu.userSimulation.checkin(pos.beaconId, phone);
      const a = emu.userSimulation.accept(pos.beaconId, phone);
      if (c.status !== 200 || a.status !== 200) {
        throw new Error(`user simulation refused: check-in ${c.status}, accept ${a.status}`);
      }
    },
    async close() {
      for (const d of drivers) await d.close();
      await emu.close();
    },
  };
}

/** The config of unit number `n` on `emu`, through the one schema (src/config/load.ts `buildConfig`). */
function unitConfig(
  emu: Emulator,
  kind: DriverKind,
  n: number,
  t: UnitTuning,
): { config: VenddConfig; secrets: Secrets } {
  const unit = { id: `ct-${kind === "v10" ? "v" : "l"}-${n}`, name: `Contract unit ${n}` };
  const engine = { flow: t.flow ?? "selection" };
  if (kind === "v10") {
    const config = buildConfig({
      unit,
      engine,
      payment: {
        driver: "v10",
        v10: {
          ...emulatorV10Settings(emu.info),
          timeouts: t.v10Timeouts ?? { postMs: 2000, getMs: 1000 },
          retries: t.v10Retries ?? { max: 2, baseDelayMs: 10, maxDelayMs: 40 },
        },
      },
    });
    return { config, secrets: emulatorSecrets(emu.info, "v10") };
  }
  const config = buildConfig({
    unit,
    engine,
    payment: {
      driver: "legacy",
      legacy: {
        ...emulatorLegacySettings(emu.info),
        posId: `contract-pos-${n}`,
        posUnitId: String(100_000_000_000_000 + n),
        captureType: t.captureType ?? "full",
        requestTimeoutMs: t.legacyTimeoutMs ?? 2000,
      },
    },
  });
  return { config, secrets: emulatorSecrets(emu.info, "legacy") };
}

/** A start request with a key derived from the order id (deterministic, one key per logical start). */
export function startRequest(orderId: string, amount: Minor, over: Partial<StartRequest> = {}): StartRequest {
  return { orderId, amount, idempotencyKey: `key-${orderId}`, ...over };
}

/**
 * Polls `ref` (spaced by the service's `pollDelayMs`, real time) until `until` holds or a final state;
 * bounded to 100 polls. Returns the last observation.
 */
export async function pollUntil(
  driver: PaymentDriver,
  ref: PaymentRef,
  until: (o: PaymentObservation) => boolean,
): Promise<PaymentObservation> {
  let last: PaymentObservation | null = null;
  let polls = 0;
  for await (const obs of watchPayment(driver, ref, { clock: systemClock, until })) {
    last = obs;
    if (++polls >= 100) break;
  }
  if (last === null) throw new Error("no observation");
  return last;
}

/** Starts `orderId`, lets the credit-card user pay, and polls until it is reserved. */
export async function reserve(
  w: ContractWorld,
  c: Connected,
  orderId: string,
  amount: Minor,
  over: Partial<StartRequest> = {},
  phone: string = USERS.credit,
): Promise<PaymentRef> {
  const ref = await c.driver.start(startRequest(orderId, amount, over));
  w.pay(c.pos, phone);
  const obs = await pollUntil(c.driver, ref, (o) => o.state === "reserved");
  if (obs.state !== "reserved") throw new Error(`${orderId} ended ${obs.state}, not reserved`);
  return ref;
}
