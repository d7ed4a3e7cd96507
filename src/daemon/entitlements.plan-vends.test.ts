/**
 * Member entitlements at the unit (issue 18), plan vends: a member's tap makes the next vend a plan vend
 * within the allowance, journaled with the member and counted; over it, the normal payment (or a denial);
 * counts survive a restart; badge UIDs reach neither the journal file nor the log; no network in the decision.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { generateUnitKey, loadUnitKey } from "../core/fleetAuth.js";
import { recoverSessions } from "../engine/recovery.js";
import { PLAN_DRIVER } from "../journal/journal.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { SimPaymentDriver } from "../payment/sim.js";
import { badgeHash, type EntitlementList, signEntitlements } from "../update/entitlements.js";
import { fetchEntitlements, periodsOf } from "./entitlements.js";
import {
  capture,
  entKey,
  list,
  OTHER_UID,
  planUnit,
  SALT,
  stopUnit,
  T0,
  tempDir,
  UID,
  UID_UPPER,
  useEntitlementFixtures,
} from "./entitlements.test-support.js";

useEntitlementFixtures();

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
