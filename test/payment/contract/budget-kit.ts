import pino from "pino";
import type { Clock, Timer } from "../../../src/core/clock.js";
import type { Minor } from "../../../src/core/money.js";
import { type Emulator, startEmulator } from "../../../src/emulator/index.js";
import type { PaymentCallDeps } from "../../../src/engine/payments.js";
import { type BudgetParams, DEFAULT_PARAMS } from "../../../src/payment/budget.js";
import type {
  PaymentDriver,
  PaymentObservation,
  PaymentRef,
  PosIdentity,
} from "../../../src/payment/driver.js";
import { createLegacyDriver } from "../../../src/payment/legacy/driver.js";
import { seededRandom } from "../../../src/payment/retry.js";
import { emulatorDriver } from "../../../src/payment/v10/emulator.test-support.js";
import { watchPayment } from "../../../src/payment/watch.js";
import { type DriverKind, USERS } from "./support.js";

/**
 * The world of the retry-budget test: the emulator on 127.0.0.1 with its real time frozen, so that its
 * clock moves only when the drivers' clock moves it, and drivers with their DEFAULT timeouts and retry
 * policy on that clock, with seeded jitter. A call's time to a final answer is then the emulator time it
 * took: its backoffs, poll waits and expired deadlines, exact and independent of the machine's load, and
 * comparable with the figures the PaymentDriver doc states.
 */

/** The budget at the drivers' defaults: what the PaymentDriver doc states. */
export const PARAMS: Record<DriverKind, BudgetParams> = DEFAULT_PARAMS;

/**
 * Emulator time as the drivers' clock. A sleep (backoff, poll wait) moves emulator time at once. A timer
 * (a request deadline) fires when the emulator has hung the request it guards (its `hang` count rose
 * since the timer was armed: the calls of a cell are sequential, so one request is in flight), or else
 * after its real duration; either way it moves emulator time to its due time. So a hang costs its full
 * timeout in emulator time and about a millisecond of real time.
 */
export class EmulatorTimeClock implements Clock {
  constructor(private readonly emu: Emulator) {}

  now(): number {
    return this.emu.clock.now();
  }

  setTimer(ms: number, fn: () => void): Timer {
    const due = this.emu.clock.now() + Math.max(0, ms);
    const hangsAtArm = this.hangs();
    let done = false;
    const stop = () => {
      done = true;
      clearTimeout(real);
      clearInterval(watch);
    };
    const fire = () => {
      if (done) return;
      stop();
      const late = due - this.emu.clock.now();
      if (late > 0) this.emu.clock.advance(late);
      fn();
    };
    const real = setTimeout(fire, Math.max(0, ms));
    const watch = setInterval(() => {
      if (this.hangs() > hangsAtArm) fire();
    }, 1);
    return { cancel: stop };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.emu.clock.advance(Math.max(0, ms));
    return new Promise((resolve) => setImmediate(resolve));
  }

  private hangs(): number {
    return this.emu.stats().faults.hang ?? 0;
  }
}

/** One unit of one cell: a fresh PoS (so no cell sees another's payment), its driver and the engine's deps. */
export interface CellUnit {
  kind: DriverKind;
  driver: PaymentDriver;
  /** Set by `open()`. */
  pos: PosIdentity | null;
  orderId: string;
  deps: PaymentCallDeps;
  open(): Promise<PosIdentity>;
  /** Starts `orderId` (reservation or direct payment), lets the customer pay, polls until it holds funds. */
  paid(mode: "reservation" | "payment", amount: Minor): Promise<PaymentRef>;
}

export interface BudgetWorld {
  emu: Emulator;
  clock: EmulatorTimeClock;
  unit(kind: DriverKind, cell: number): CellUnit;
  /** Ledger kinds of one order, in order. */
  ledger(orderId: string): string[];
  close(): Promise<void>;
}

const silent = pino({ level: "silent" });

export async function startBudgetWorld(): Promise<BudgetWorld> {
  const frozen = Date.now();
  const emu = await startEmulator({ port: 0, host: "127.0.0.1", timeSource: () => frozen });
  const clock = new EmulatorTimeClock(emu);
  const drivers: PaymentDriver[] = [];

  const driverFor = (kind: DriverKind, cell: number): PaymentDriver => {
    const random = seededRandom(1000 + cell);
    if (kind === "v10") {
      // The drivers' default timeouts: the budget is stated at them.
      return emulatorDriver(emu, {
        merchantBrandId: null,
        merchantLocationId: null,
        merchantPosId: `budget-${cell}`,
        posName: `Budget unit ${cell}`,
        timeouts: undefined,
        clock,
        random,
        newKey: () => `budget-pos-key-${cell}`,
      });
    }
    const l = emu.info.legacy;
    return createLegacyDriver({
      baseUrl: l.baseUrl,
      apiVersion: "V08",
      merchantId: l.merchantId,
      locationId: l.locationId,
      posId: `budget-pos-${cell}`,
      posUnitId: String(200_000_000_000_000 + cell),
      posName: `Budget unit ${cell}`,
      bulkRef: "",
      captureType: "full",
      apiKey: l.apiKey,
      merchantKey: l.merchantKey,
      clock,
      random,
      ownsOrder: () => false,
    });
  };

  return {
    emu,
    clock,
    unit(kind, cell) {
      const driver = driverFor(kind, cell);
      drivers.push(driver);
      const orderId = `budget-${kind}-${cell}`;
      const u: CellUnit = {
        kind,
        driver,
        pos: null,
        orderId,
        deps: { payment: driver, logger: silent, signal: new AbortController().signal },
        async open() {
          u.pos = await driver.open();
          return u.pos;
        },
        async paid(mode, amount) {
          const pos = u.pos ?? (await u.open());
          const ref = await driver.start({ orderId, amount, idempotencyKey: `key-${orderId}`, mode });
          const c = emu.userSimulation.checkin(pos.beaconId, USERS.credit);
          const a = emu.userSimulation.accept(pos.beaconId, USERS.credit);
          if (c.status !== 200 || a.status !== 200)
            throw new Error(`user simulation: ${c.status} ${a.status}`);
          const target = mode === "reservation" ? "reserved" : "paid";
          const obs = await until(driver, ref, clock, (o) => o.state === target);
          if (obs.state !== target) throw new Error(`${orderId} ended ${obs.state}, not ${target}`);
          return ref;
        },
      };
      return u;
    },
    ledger: (orderId) =>
      emu
        .ledger()
        .filter((e) => e.orderId === orderId)
        .map((e) => e.kind),
    async close() {
      // A cell may have closed its driver already; a second close is harmless here.
      await Promise.allSettled(drivers.map((d) => d.close()));
      await emu.close();
    },
  };
}

/** Polls at the service's pace on emulator time until `stop` or a final state (bounded). */
async function until(
  driver: PaymentDriver,
  ref: PaymentRef,
  clock: Clock,
  stop: (o: PaymentObservation) => boolean,
): Promise<PaymentObservation> {
  let last: PaymentObservation | null = null;
  let polls = 0;
  for await (const obs of watchPayment(driver, ref, { clock, until: stop, random: () => 0 })) {
    last = obs;
    if (++polls >= 20) break;
  }
  if (last === null) throw new Error("no observation");
  return last;
}
