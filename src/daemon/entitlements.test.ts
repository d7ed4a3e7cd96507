/**
 * Member entitlements at the unit (issue 18): the store refuses lists not signed by the entitlement key,
 * expired or tampered ones (the previous list stays); a member's tap makes the next vend a plan vend within
 * the allowance, journaled with the member and counted; over it, the normal payment (or a denial); counts
 * survive a restart; badge UIDs reach neither the journal file nor the log; no network in the decision.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createSimDisplay, type SimDisplay } from "../../drivers/display/sim.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { ENGINE_DEFAULTS } from "../../test/support/unit.js";
import { ManualClock } from "../core/clock.js";
import { generateUnitKey, loadUnitKey } from "../core/fleetAuth.js";
import { seededRandom } from "../core/random.js";
import { createEngine } from "../engine/factory.js";
import { recoverSessions } from "../engine/recovery.js";
import type { VendEngine } from "../engine/runner.js";
import { PLAN_DRIVER } from "../journal/journal.js";
import { openSqliteJournal, type SqliteJournal } from "../journal/sqlite.js";
import { SimPaymentDriver } from "../payment/sim.js";
import { badgeHash, type EntitlementList, signEntitlements } from "../update/entitlements.js";
import { parsePublicKey } from "../update/minisign.js";
import { makeKey, type TestKey } from "../update/test-support.js";
import {
  EntitlementStore,
  fetchEntitlements,
  loadEntitlementKey,
  MemberGate,
  periodsOf,
  StaleListError,
} from "./entitlements.js";

const SALT = "c2FsdHNhbHRzYWx0c2FsdA";
/** The member's badge UID as the reader gives it (normaliseUid: lower-case hex). */
const UID = "04a1b2c3d4e5f6";
const UID_UPPER = UID.toUpperCase();
const OTHER_UID = "0badc0de";
/** 2026-11-25 10:00 UTC, a Wednesday. */
const T0 = Date.UTC(2026, 10, 25, 10, 0, 0);

let entKey: TestKey;
let configKey: TestKey;
let strangerKey: TestKey;
beforeAll(async () => {
  [entKey, configKey, strangerKey] = await Promise.all([makeKey(), makeKey(), makeKey()]);
});

function list(over: Partial<EntitlementList> = {}, perDay = 2): EntitlementList {
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

let dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "vendd-ent-"));
  dirs.push(d);
  return d;
}

/** A logger whose lines are kept (JSON text), at debug level. */
function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}

function storeAt(file: string, clock: ManualClock, logger: Logger): EntitlementStore {
  return new EntitlementStore({
    publicKey: parsePublicKey(entKey.publicKeyText),
    listFile: file,
    unitId: "vm-test",
    clock,
    logger,
  });
}

let units: { engine: VendEngine; journal: SqliteJournal }[] = [];
afterEach(async () => {
  for (const u of units) {
    await u.engine.stop();
    u.journal.close();
  }
  units = [];
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

interface PlanUnit {
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
async function planUnit(o: {
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

async function stopUnit(u: PlanUnit): Promise<void> {
  await u.engine.stop();
  u.journal.close();
  units = units.filter((x) => x.engine !== u.engine);
}

describe("entitlement store", () => {
  it("refuses lists signed by a config key or an unknown key, expired or tampered; the previous list stays", async () => {
    const dir = tempDir();
    const file = join(dir, "entitlements.json");
    const clock = new ManualClock(T0);
    const { logger, lines } = capture();
    const store = storeAt(file, clock, logger);
    expect(store.load()).toBe("missing");
    const write = (signed: { document: string; signature: string }) =>
      writeFileSync(file, JSON.stringify(signed));

    write(signEntitlements(list({ serial: 7 }), configKey.sk));
    expect(store.load()).toBe("wrongKey");
    write(signEntitlements(list({ serial: 7 }), strangerKey.sk));
    expect(store.load()).toBe("wrongKey");
    write(signEntitlements(list({ serial: 7, validUntil: T0 - 1 }), entKey.sk));
    expect(store.load()).toBe("expired");
    const good = signEntitlements(list({ serial: 7 }), entKey.sk);
    write({ document: good.document.replace('"items":2', '"items":9'), signature: good.signature });
    expect(store.load()).toBe("signature");
    expect(store.current()).toBeNull();
    expect(await store.lookup(UID)).toBeNull();

    write(good);
    expect(store.load()).toBeNull();
    expect(store.current()?.serial).toBe(7);
    // A refused file later: the list in force stays.
    write(signEntitlements(list({ serial: 8 }), configKey.sk));
    expect(store.load()).toBe("wrongKey");
    expect(store.current()?.serial).toBe(7);
    expect((await store.lookup(UID))?.member.memberId).toBe("m-1");
    expect(lines.filter((l) => l.includes("entitlement list refused")).length).toBe(5);
    expect(lines.some((l) => l.includes('"code":"wrongKey"'))).toBe(true);

    // Until it expires: then it is not used, members fall back to the normal flow.
    clock.advance(7 * 86_400_000);
    expect(store.current()).toBeNull();
    expect(await store.lookup(UID)).toBeNull();
  });

  it("install verifies, refuses a lower serial, writes the file atomically; the key loads from a line or a .pub file", () => {
    const dir = tempDir();
    const file = join(dir, "entitlements.json");
    const clock = new ManualClock(T0);
    const store = storeAt(file, clock, pino({ level: "silent" }));
    const s9 = signEntitlements(list({ serial: 9 }), entKey.sk);
    store.install(s9.document, s9.signature);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(s9);
    const s8 = signEntitlements(list({ serial: 8 }), entKey.sk);
    expect(() => store.install(s8.document, s8.signature)).toThrow(StaleListError);
    const bad = signEntitlements(list({ serial: 10 }), configKey.sk);
    expect(() => store.install(bad.document, bad.signature)).toThrow(/not signed by the entitlement key/);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(s9);
    // A new store reads what install wrote.
    const again = storeAt(file, clock, pino({ level: "silent" }));
    expect(again.load()).toBeNull();
    expect(again.current()?.serial).toBe(9);

    const pub = join(dir, "entitlement.pub");
    writeFileSync(pub, entKey.publicKeyText);
    expect(loadEntitlementKey(pub).raw).toEqual(loadEntitlementKey(entKey.line).raw);
  });

  it("finds a member only at its units, in its validity, by the hash of the normalised UID (either case)", async () => {
    const dir = tempDir();
    const clock = new ManualClock(T0);
    const store = storeAt(join(dir, "e.json"), clock, pino({ level: "silent" }));
    const s = signEntitlements(list(), entKey.sk);
    store.install(s.document, s.signature);
    expect((await store.lookup(UID))?.member.memberId).toBe("m-1");
    expect((await store.lookup(UID_UPPER))?.member.memberId).toBe("m-1");
    expect(await store.lookup(OTHER_UID)).toBeNull();
    const elsewhere = new EntitlementStore({
      publicKey: parsePublicKey(entKey.publicKeyText),
      listFile: join(dir, "e.json"),
      unitId: "vm-other",
      clock,
      logger: pino({ level: "silent" }),
    });
    elsewhere.load();
    expect(await elsewhere.lookup(UID)).toBeNull();
  });

  it("re-reads the list file when it changes (watch), keeping the list in force on a refused one", async () => {
    const dir = tempDir();
    const file = join(dir, "entitlements.json");
    const store = storeAt(file, new ManualClock(T0), pino({ level: "silent" }));
    const stop = store.watch();
    try {
      writeFileSync(file, JSON.stringify(signEntitlements(list({ serial: 3 }), entKey.sk)));
      await vi.waitFor(() => expect(store.current()?.serial).toBe(3), { timeout: 5000 });
      writeFileSync(file, JSON.stringify(signEntitlements(list({ serial: 4 }), configKey.sk)));
      writeFileSync(file, JSON.stringify(signEntitlements(list({ serial: 5 }), entKey.sk)));
      await vi.waitFor(() => expect(store.current()?.serial).toBe(5), { timeout: 5000 });
    } finally {
      stop();
    }
  });

  it("counts days and months in the list's time zone", () => {
    // 23:30 UTC on 30 November is 1 December in Oslo.
    expect(periodsOf(Date.UTC(2026, 10, 30, 23, 30), "Europe/Oslo")).toEqual({
      day: "2026-12-01",
      month: "2026-12",
    });
    expect(periodsOf(Date.UTC(2026, 10, 30, 23, 30), "UTC")).toEqual({ day: "2026-11-30", month: "2026-11" });
  });
});

describe("plan vends at the unit (sim devices, file journal, virtual time)", () => {
  function install(dir: string, l: EntitlementList): void {
    writeFileSync(join(dir, "entitlements.json"), JSON.stringify(signEntitlements(l, entKey.sk)));
  }

  it("within the allowance: a plan vend approved at the price, journaled with the member, counted; over it: the normal payment", async () => {
    const dir = tempDir();
    install(dir, list());
    const { logger, lines } = capture();
    const u = await planUnit({ dir, logger });

    const durableBefore = u.journal.durableCommits;
    for (let i = 0; i < 2; i++) {
      expect(await u.gate.tap(UID)).toBe("member");
      expect(u.display.screens.at(-1)).toMatchObject({ kind: "idle", message: "Plan: choose a product" });
      u.vmc.requestVend(12, 150);
      await u.run();
    }
    expect(u.vmc.vends).toEqual([
      { item: 12, price: 150, result: "delivered" },
      { item: 12, price: 150, result: "delivered" },
    ]);
    expect(u.payment.ledger).toEqual([]);
    // One durable commit per plan vend: the session with its member and the approval, before the line.
    expect(u.journal.durableCommits - durableBefore).toBe(2);
    const plan = u.journal.sessions();
    expect(plan.map((s) => [s.driver, s.result, s.approvedAmount, s.vendOutcome, s.decision])).toEqual([
      [PLAN_DRIVER, "captured", 150, "success", null],
      [PLAN_DRIVER, "captured", 150, "success", null],
    ]);
    for (const s of plan) {
      expect(u.journal.intents(s.id)).toEqual([]);
      expect(u.journal.planMember(s.id)).toMatchObject({ memberId: "m-1", planId: "coffee-20" });
    }
    const { day, month } = periodsOf(T0, "Europe/Oslo");
    expect(u.journal.planUsage("m-1", day)).toEqual({ items: 2, amount: 300 });
    expect(u.journal.planUsage("m-1", month)).toEqual({ items: 2, amount: 300 });

    // The third today exceeds perDay (2): the normal payment is offered, and the vend is paid.
    expect(await u.gate.tap(UID)).toBe("member");
    u.vmc.requestVend(12, 150);
    await u.run();
    expect(u.display.screens.map((s) => s.kind)).toContain("pay");
    expect(u.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 150],
      ["captured", 150],
    ]);
    const paid = u.journal.sessions({ limit: 1 })[0];
    expect(paid?.driver).toBe("sim");
    expect(paid && u.journal.planMember(paid.id)).toBeUndefined();
    expect(u.journal.planUsage("m-1", day)).toEqual({ items: 2, amount: 300 });

    // Without a tap, a vend is simply paid; an unknown badge also leads to the normal flow.
    expect(await u.gate.tap(OTHER_UID)).toBe("unknown");
    u.vmc.requestVend(3, 200);
    await u.run();
    expect(u.payment.ledger.filter((e) => e.kind === "captured")).toHaveLength(2);
    expect(lines.some((l) => l.includes('"memberId":"m-1"') && l.includes("plan vend granted"))).toBe(true);

    // UIDs never reach the journal file nor the log (the hash and the member id do).
    await stopUnit(u);
    const bytes = readFileSync(join(dir, "journal.db")).toString("latin1");
    const wal = (() => {
      try {
        return readFileSync(join(dir, "journal.db-wal")).toString("latin1");
      } catch {
        return "";
      }
    })();
    for (const uid of [UID, UID_UPPER, OTHER_UID, OTHER_UID.toUpperCase()]) {
      expect(bytes.includes(uid)).toBe(false);
      expect(wal.includes(uid)).toBe(false);
      expect(lines.join("").includes(uid)).toBe(false);
    }
    expect(bytes.includes(badgeHash(UID_UPPER, SALT))).toBe(true);
  });

  it("overAllowance deny: over the allowance, or a badge not on the list, the vend is denied with a clear screen", async () => {
    const dir = tempDir();
    install(dir, list({}, 1));
    const u = await planUnit({ dir, logger: pino({ level: "silent" }), overAllowance: "deny" });
    await u.gate.tap(UID);
    u.vmc.requestVend(12, 150);
    await u.run();
    await u.gate.tap(UID);
    u.vmc.requestVend(12, 150);
    await u.run();
    expect(u.vmc.vends.map((v) => v.result)).toEqual(["delivered", "denied"]);
    expect(u.display.screens.at(-1)).toMatchObject({
      kind: "idle",
      message: "Your plan's allowance is used up today",
    });
    await u.gate.tap(OTHER_UID);
    u.vmc.requestVend(12, 150);
    await u.run();
    expect(u.vmc.vends.map((v) => v.result)).toEqual(["delivered", "denied", "denied"]);
    expect(u.display.screens.at(-1)).toMatchObject({ message: "This badge has no plan at this machine" });
    expect(u.payment.ledger).toEqual([]);
    // Denials open no session: only the plan vend is journaled.
    expect(u.journal.sessions().map((s) => s.driver)).toEqual([PLAN_DRIVER]);
    // A tap holds for tapWindowMs only: later, the vend is an ordinary paid one and the greeting is gone.
    await u.gate.tap(UID);
    await u.clock.advanceAsync(61_000, 1000);
    expect(u.display.screens.at(-1)).toMatchObject({ kind: "idle", message: "Choose a product" });
    u.vmc.requestVend(12, 150);
    await u.run();
    expect(u.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
  });

  it("the allowance counting survives a restart; an approved vend cut off before its outcome counts", async () => {
    const dir = tempDir();
    install(dir, list({}, 3));
    const logger = pino({ level: "silent" });
    const a = await planUnit({ dir, logger });
    await a.gate.tap(UID);
    a.vmc.requestVend(12, 150);
    await a.run();
    // A second plan vend approved, then the unit stops before the VMC reports: outcome unknown.
    await a.gate.tap(UID);
    a.vmc.requestVend(7, 120);
    await a.clock.advanceAsync(100, 100);
    expect(a.engine.current.tag).toBe("planVending");
    await stopUnit(a);

    let resolved: string[] = [];
    const recover = async (journal: SqliteJournal, payment: SimPaymentDriver) => {
      const signal = new AbortController().signal;
      const report = await recoverSessions(
        journal,
        { payment, logger, signal },
        { unknownOutcome: "capture", paymentMode: "reservation" },
      );
      resolved = report.resolved.map((r) => `${r.result}: ${r.how}`);
    };
    const b = await planUnit({ dir, logger, start: T0 + 3_600_000, before: recover });
    expect(resolved).toEqual(["captured: plan vend approved, outcome unknown: counted"]);
    const { day } = periodsOf(T0, "Europe/Oslo");
    expect(b.journal.planUsage("m-1", day)).toEqual({ items: 2, amount: 270 });
    // One left today: granted; the next one is over (paid).
    await b.gate.tap(UID);
    b.vmc.requestVend(12, 150);
    await b.run();
    await b.gate.tap(UID);
    b.vmc.requestVend(12, 150);
    await b.run();
    expect(b.journal.planUsage("m-1", day)).toEqual({ items: 3, amount: 420 });
    expect(b.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
  });

  it("decides with the fleet unreachable and an expired list is not used; fetch installs a list from the fleet", async () => {
    const dir = tempDir();
    install(dir, list({ validUntil: T0 + 3_600_000 }));
    const u = await planUnit({ dir, logger: pino({ level: "silent" }) });
    const unitKey = loadUnitKey(generateUnitKey().privatePem);
    // The fleet is unreachable (nothing listens): fetching fails, the decision does not need it.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(
      fetchEntitlements(`http://127.0.0.1:${port}`, { key: unitKey, clock: u.clock }, null, u.store, {
        timeoutMs: 2000,
      }),
    ).rejects.toThrow();
    expect(await u.gate.tap(UID)).toBe("member");
    u.vmc.requestVend(12, 150);
    await u.run();
    expect(u.journal.sessions()[0]?.driver).toBe(PLAN_DRIVER);

    // An hour later the list has expired: a tap arms nothing, the vend is paid.
    u.clock.advance(3_600_000);
    expect(await u.gate.tap(UID)).toBe("noList");
    u.vmc.requestVend(12, 150);
    await u.run();
    expect(u.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);

    // The fleet sends a new list (serial 6): signed GET, installed, in force.
    const fresh = signEntitlements(list({ serial: 6, issuedAt: u.clock.now() }), entKey.sk);
    let seen: Record<string, unknown> = {};
    const fleet = createServer((req, res) => {
      seen = { url: req.url, key: req.headers["x-vendd-key"], etag: req.headers["if-none-match"] };
      if (req.headers["if-none-match"] === '"e6"') {
        res.writeHead(304).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json", etag: '"e6"' }).end(JSON.stringify(fresh));
    });
    await new Promise<void>((r) => fleet.listen(0, "127.0.0.1", r));
    try {
      const base = `http://127.0.0.1:${(fleet.address() as AddressInfo).port}`;
      const got = await fetchEntitlements(base, { key: unitKey, clock: u.clock }, null, u.store);
      expect(got).toMatchObject({ status: "updated", etag: '"e6"' });
      expect(seen).toMatchObject({ url: "/api/unit/v1/entitlements", key: unitKey.publicKey });
      expect(await fetchEntitlements(base, { key: unitKey, clock: u.clock }, '"e6"', u.store)).toEqual({
        status: "unchanged",
      });
    } finally {
      await new Promise<void>((r) => fleet.close(() => r()));
    }
    expect(await u.gate.tap(UID)).toBe("member");
  });
});
