/**
 * Shared fixtures for the unit's member-entitlement tests (entitlements*.test.ts): the test keys, a signed
 * list builder, temp dirs, a capturing logger, and a selection-first unit with the member gate on a
 * ManualClock. Call useEntitlementFixtures() at the top of each test file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { afterEach, beforeAll } from "vitest";
import { createSimDisplay, type SimDisplay } from "../../drivers/display/sim.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { ENGINE_DEFAULTS } from "../../test/support/unit.js";
import { ManualClock } from "../core/clock.js";
import { seededRandom } from "../core/random.js";
import { createEngine } from "../engine/factory.js";
import type { VendEngine } from "../engine/runner.js";
import { openSqliteJournal, type SqliteJournal } from "../journal/sqlite.js";
import { SimPaymentDriver } from "../payment/sim.js";
import { badgeHash, type EntitlementList } from "../update/entitlements.js";
import { parsePublicKey } from "../update/minisign.js";
import { makeKey, type TestKey } from "../update/update.test-support.js";
import { EntitlementStore, MemberGate } from "./entitlements.js";

export const SALT = "c2FsdHNhbHRzYWx0c2FsdA";
/** The member's badge UID as the reader gives it (normaliseUid: lower-case hex). */
export const UID = "04a1b2c3d4e5f6";
export const UID_UPPER = UID.toUpperCase();
export const OTHER_UID = "0badc0de";
/** 2026-11-25 10:00 UTC, a Wednesday. */
export const T0 = Date.UTC(2026, 10, 25, 10, 0, 0);

export let entKey: TestKey;
export let configKey: TestKey;
export let strangerKey: TestKey;

let dirs: string[] = [];
let units: { engine: VendEngine; journal: SqliteJournal }[] = [];

/** Registers the hooks: keys made once per file; units stopped and temp dirs removed after each test. */
export function useEntitlementFixtures(): void {
  beforeAll(async () => {
    [entKey, configKey, strangerKey] = await Promise.all([makeKey(), makeKey(), makeKey()]);
  });
  afterEach(async () => {
    for (const u of units) {
      await u.engine.stop();
      u.journal.close();
    }
    units = [];
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    dirs = [];
  });
}

export function list(over: Partial<EntitlementList> = {}, perDay = 2): EntitlementList {
  return {
    version: 1,
    serial: 5,
    issuedAt: T0 - 60_000,
    validUntil: T0 + 7 * 86_400_000,
    badgeSalt: SALT,
    timeZone: "Europe/Oslo",
    members: [
      {
        badge: badgeHash(UID_UPPER, SALT),
        memberId: "m-1",
        planId: "coffee-20",
        validFrom: T0 - 86_400_000,
        validTo: T0 + 30 * 86_400_000,
        perDay: { items: perDay, amount: null },
        perMonth: { items: 20, amount: 5000 },
        units: ["vm-test"],
      },
    ],
    ...over,
  };
}

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "vendd-ent-"));
  dirs.push(d);
  return d;
}

/** A logger whose lines are kept (JSON text), at debug level. */
export function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}

export function storeAt(file: string, clock: ManualClock, logger: Logger): EntitlementStore {
  return new EntitlementStore({
    publicKey: parsePublicKey(entKey.publicKeyText),
    listFile: file,
    unitId: "vm-test",
    clock,
    logger,
  });
}

export interface PlanUnit {
  clock: ManualClock;
  vmc: SimVmc;
  payment: SimPaymentDriver;
  journal: SqliteJournal;
  display: SimDisplay;
  engine: VendEngine;
  gate: MemberGate;
  store: EntitlementStore;
  run(ms?: number): Promise<void>;
}

/** A selection-first unit (sim VMC, sim payment, file journal) with the member gate, on a ManualClock. */
export async function planUnit(o: {
  dir: string;
  logger: Logger;
  overAllowance?: "pay" | "deny";
  start?: number;
  /** Runs after the journal opens, before the engine starts (the daemon's recovery step). */
  before?: (journal: SqliteJournal, payment: SimPaymentDriver) => Promise<void>;
}): Promise<PlanUnit> {
  const clock = new ManualClock(o.start ?? T0);
  const vmc = new SimVmc({ clock, dispenseMs: 500, outcome: () => "success" });
  const payment = new SimPaymentDriver({ clock, customer: () => ({ action: "accept", afterMs: 1500 }) });
  const journal = openSqliteJournal({ path: join(o.dir, "journal.db"), unitId: "vm-test", clock });
  await o.before?.(journal, payment);
  const display = createSimDisplay();
  const store = storeAt(join(o.dir, "entitlements.json"), clock, o.logger);
  store.load();
  let engine: VendEngine | null = null;
  const gate = new MemberGate({
    store,
    journal,
    clock,
    logger: o.logger,
    display,
    overAllowance: o.overAllowance ?? "pay",
    tapWindowMs: 60_000,
    idle: () => engine?.idle ?? true,
  });
  engine = createEngine(ENGINE_DEFAULTS, {
    payment,
    vmc,
    display,
    journal,
    clock,
    logger: o.logger,
    random: seededRandom(3),
    plans: gate,
  });
  await engine.start();
  units.push({ engine, journal });
  return {
    clock,
    vmc,
    payment,
    journal,
    display,
    engine,
    gate,
    store,
    run: (ms = 120_000) => clock.advanceAsync(ms, 100),
  };
}

export async function stopUnit(u: PlanUnit): Promise<void> {
  await u.engine.stop();
  u.journal.close();
  units = units.filter((x) => x.engine !== u.engine);
}
