import pino, { type Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { createSimDisplay, type SimDisplay } from "../../drivers/display/sim.js";
import { type DispenseOutcome, SimVmc } from "../../drivers/vmc/sim.js";
import { ManualClock } from "../../src/core/clock.js";
import type { FaultPoints } from "../../src/core/faults.js";
import { seededRandom } from "../../src/core/random.js";
import { createEngine } from "../../src/engine/factory.js";
import type { EngineOptions } from "../../src/engine/options.js";
import type { VendEngine } from "../../src/engine/runner.js";
import type { Journal } from "../../src/journal/journal.js";
import { openSqliteJournal, type SqliteJournal } from "../../src/journal/sqlite.js";
import type { PaymentDriver } from "../../src/payment/driver.js";
import { type CustomerPlan, SimPaymentDriver } from "../../src/payment/sim.js";

export interface TestUnit {
  clock: ManualClock;
  vmc: SimVmc;
  payment: SimPaymentDriver;
  journal: SqliteJournal;
  display: SimDisplay;
  engine: VendEngine;
  /** Moves virtual time forward, letting promises run between 100 ms steps. */
  run(ms?: number): Promise<void>;
}

export const ENGINE_DEFAULTS: EngineOptions = {
  currency: "DKK",
  scheme: "servicepos",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
  paymentMode: "reservation",
  captureType: "full",
};

/** A whole unit in one process on a ManualClock: sim VMC, sim payment service, in-memory journal. */
export async function startTestUnit(
  opts: {
    customer?: CustomerPlan;
    partialCapturePossible?: boolean;
    dispense?: DispenseOutcome;
    engine?: Partial<EngineOptions>;
    journal?: (j: SqliteJournal) => Journal;
    payment?: (p: SimPaymentDriver) => PaymentDriver;
    /** Wraps the sim display (a pixel display drawing beside it); default the sim display alone. */
    display?: (d: SimDisplay) => CheckinDisplay;
    journalPath?: string;
    /** Session ids (default: node:crypto UUIDs, as in production). */
    newId?: () => string;
    /** Default: silent. */
    logger?: Logger;
    /** Fault points of the money path (default none). */
    faults?: FaultPoints;
  } = {},
): Promise<TestUnit> {
  const clock = new ManualClock();
  const vmc = new SimVmc({ clock, dispenseMs: 500, outcome: () => opts.dispense ?? "success" });
  const payment = new SimPaymentDriver({
    clock,
    customer: () => opts.customer ?? { action: "accept", afterMs: 1500 },
    ...(opts.partialCapturePossible === undefined
      ? {}
      : { partialCapturePossible: opts.partialCapturePossible }),
  });
  const journal = openSqliteJournal({ path: opts.journalPath ?? ":memory:", unitId: "vm-test", clock });
  const display = createSimDisplay();
  const engine = createEngine(
    { ...ENGINE_DEFAULTS, ...opts.engine },
    {
      payment: opts.payment ? opts.payment(payment) : payment,
      vmc,
      display: opts.display ? opts.display(display) : display,
      journal: opts.journal ? opts.journal(journal) : journal,
      clock,
      logger: opts.logger ?? pino({ level: "silent" }),
      random: seededRandom(11),
      ...(opts.newId ? { newId: opts.newId } : {}),
      ...(opts.faults ? { faults: opts.faults } : {}),
    },
  );
  await engine.start();
  return {
    clock,
    vmc,
    payment,
    journal,
    display,
    engine,
    run: (ms = 120_000) => clock.advanceAsync(ms, 100),
  };
}
