/**
 * Issue 31, defect 1 (in process, virtual time): a unit with a valid entitlement list starts while the
 * payment service is unreachable and serves members at once: the VMC is enabled and the NFC reader started,
 * a member's tap gives a plan vend within the day allowance, a selection without a badge (or beyond the
 * allowance) is denied at the machine with "card payments unavailable" and nothing is sent to the service.
 * A plan vend a crash left open is settled from the journal alone; an unresolved paid session waits for the
 * service. When the service answers, that session is recovered first and paid vends work again.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createSimNfcStation, SimTag } from "../../drivers/nfc/sim.js";
import { loadConfig } from "../../src/config/load.js";
import { ManualClock } from "../../src/core/clock.js";
import {
  entKey,
  list,
  T0,
  tempDir,
  UID,
  useEntitlementFixtures,
} from "../../src/daemon/entitlements.test-support.js";
import { periodsOf } from "../../src/daemon/memberGate.js";
import { CARD_UNAVAILABLE } from "../../src/engine/steps.js";
import { PLAN_DRIVER } from "../../src/journal/journal.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import type { PaymentObservation, PaymentRef, PosIdentity, StartRequest } from "../../src/payment/driver.js";
import { PaymentError } from "../../src/payment/errors.js";
import { SimPaymentDriver } from "../../src/payment/sim.js";
import { signEntitlements } from "../../src/update/entitlements.js";
import { NOWHERE, startTestDaemon, v10Unit } from "../support/inprocess.js";

useEntitlementFixtures();

/** The sim payment service behind an outage switch: while `down`, every call fails and is counted. */
class OutagePayment extends SimPaymentDriver {
  down = true;
  readonly whileDown: string[] = [];
  private gate(op: string): void {
    if (!this.down) return;
    this.whileDown.push(op);
    throw new PaymentError("unavailable", `${op}: connect ECONNREFUSED`);
  }
  override async open(): Promise<PosIdentity> {
    this.gate("open");
    return super.open();
  }
  override async start(req: StartRequest): Promise<PaymentRef> {
    this.gate("start");
    return super.start(req);
  }
  override async lookup(orderId: string): Promise<PaymentObservation | null> {
    this.gate("lookup");
    return super.lookup(orderId);
  }
}

/** A session's close as a read-only reader sees it (the daemon owns the journal). */
function sessionResult(path: string, id: string): { closed: boolean; result: string | null } {
  const db = new Database(path, { readonly: true });
  try {
    const row = db.prepare("SELECT closed_at, result FROM sessions WHERE id = ?").get(id) as
      | { closed_at: number | null; result: string | null }
      | undefined;
    return { closed: row?.closed_at != null, result: row?.result ?? null };
  } finally {
    db.close();
  }
}

describe("members vend while the payment service is down from the start (issue 31)", () => {
  it("serves members at once, denies other selections at the machine, recovers paid sessions when the service answers", async () => {
    const dir = tempDir();
    const loaded0 = v10Unit(dir, "vm-test", NOWHERE);
    const listFile = join(dir, "entitlements.json");
    writeFileSync(listFile, JSON.stringify(signEntitlements(list(), entKey.sk)));
    appendFileSync(
      join(dir, "unit.yaml"),
      `\nnfc: { enabled: true, kind: sim }\nentitlements: { publicKey: "${entKey.line}", listFile: ${listFile}, overAllowance: pay }\n`,
    );
    const loaded = loadConfig(join(dir, "unit.yaml"), { secretsFile: join(dir, "secrets.yaml"), env: {} });
    expect(loaded.config.journal.path).toBe(loaded0.config.journal.path);
    const { day } = periodsOf(T0, "Europe/Oslo");

    // What the last run left: a plan vend approved without an outcome, and a paid sale whose start was sent.
    const clock = new ManualClock(T0);
    const j = openSqliteJournal({ path: loaded.config.journal.path, unitId: "vm-test", clock });
    const planOrder = j.nextOrderId();
    const paidOrder = j.nextOrderId();
    j.atomically(() => {
      j.openSession({
        id: "left-plan",
        orderId: planOrder,
        flow: "selection",
        item: 3,
        price: 150,
        driver: PLAN_DRIVER,
        member: { memberId: "m-1", planId: "coffee-20", badge: "b".repeat(43), day, month: day.slice(0, 7) },
      });
      j.approveVend("left-plan", 3, 150);
      j.openSession({
        id: "left-paid",
        orderId: paidOrder,
        flow: "selection",
        item: 4,
        price: 200,
        driver: "sim",
      });
      j.recordIntent({
        sessionId: "left-paid",
        op: "start",
        orderId: paidOrder,
        paymentId: null,
        amount: 200,
      });
    });
    j.close();

    const payment = new OutagePayment({ clock, customer: () => ({ action: "accept", afterMs: 1500 }) });
    const nfc = createSimNfcStation({ clock, badges: [] });
    const u = await startTestDaemon(loaded, { clock, deps: { devices: { payment, nfc } } });
    try {
      await u.until(() => u.vmc.status === "enabled", 30_000, "VMC enabled");
      await u.until(() => u.codes()[0] === "paymentUnreachable", 30_000, "the first attempt failed");
      expect(u.daemon.status().inService).toBe(false);
      expect(u.codes()).toEqual(["paymentUnreachable"]);
      expect(u.daemon.status().reasons[0]?.detail).toContain("members' plan vends continue");
      expect(u.notifier.readies.length).toBe(1);

      const tap = async () => {
        const reader = nfc.sim.plug();
        const seen = u.display.screens.length;
        reader.present(new SimTag(UID));
        const t0 = Date.now();
        while (
          !u.display.screens
            .slice(seen)
            .some((s) => s.kind === "idle" && s.message === "Plan: choose a product")
        ) {
          if (Date.now() - t0 > 10_000) throw new Error("no greeting after the tap");
          await new Promise((r) => setTimeout(r, 5));
        }
        reader.remove();
      };
      const vend = async (price: number) => {
        const before = u.vmc.vends.length;
        u.vmc.requestVend(5, price);
        await u.until(() => u.vmc.vends.length > before && u.daemon.engine?.idle === true, 30_000, "vend");
        return u.vmc.vends.at(-1)?.result;
      };

      // The crash's plan vend was settled from the journal (counted: 1 of 2 today).
      // A member's tap: one more plan vend within the day allowance.
      await tap();
      expect(await vend(150)).toBe("delivered");
      // Beyond the day allowance (2): the normal payment would be offered; with no service: denied.
      await tap();
      expect(await vend(150)).toBe("denied");
      expect(u.display.screens.at(-1)).toMatchObject({ kind: "idle", message: CARD_UNAVAILABLE });
      // No badge: denied at the machine.
      expect(await vend(250)).toBe("denied");
      expect(u.display.screens.at(-1)).toMatchObject({ kind: "idle", message: CARD_UNAVAILABLE });
      expect(payment.whileDown.filter((op) => op !== "open" && op !== "lookup")).toEqual([]);
      expect(payment.ledger).toEqual([]);

      const result = (id: string) => sessionResult(loaded.config.journal.path, id);
      expect(result("left-plan")).toEqual({ closed: true, result: "captured" });
      // The paid session waits for the service: nothing touched it.
      expect(result("left-paid")).toEqual({ closed: false, result: null });

      // The service answers: the paid session is recovered first, then selections are paid again.
      payment.down = false;
      await u.until(() => u.daemon.status().inService, 120_000, "in service");
      expect(result("left-paid").closed).toBe(true);
      expect(await vend(250)).toBe("delivered");
      expect(payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
        ["reserved", 250],
        ["captured", 250],
      ]);
      expect(u.display.screens.at(-1)).toMatchObject({ kind: "idle", message: "Choose a product" });
    } finally {
      await u.daemon.stop();
    }
  }, 60_000);
  it("honours the list's expiry: with only an expired list on disk nobody is served before the service answers", async () => {
    const dir = tempDir();
    v10Unit(dir, "vm-test", NOWHERE);
    const listFile = join(dir, "entitlements.json");
    const expired = list({ issuedAt: T0 - 9 * 86_400_000, validUntil: T0 - 1 });
    writeFileSync(listFile, JSON.stringify(signEntitlements(expired, entKey.sk)));
    appendFileSync(
      join(dir, "unit.yaml"),
      `\nnfc: { enabled: true, kind: sim }\nentitlements: { publicKey: "${entKey.line}", listFile: ${listFile}, overAllowance: pay }\n`,
    );
    const loaded = loadConfig(join(dir, "unit.yaml"), { secretsFile: join(dir, "secrets.yaml"), env: {} });
    const clock = new ManualClock(T0);
    const payment = new OutagePayment({ clock });
    const nfc = createSimNfcStation({ clock, badges: [] });
    const u = await startTestDaemon(loaded, { clock, deps: { devices: { payment, nfc } } });
    try {
      await u.until(() => u.codes()[0] === "paymentUnreachable", 30_000, "the first attempt failed");
      await u.advance(5_000);
      expect(u.vmc.status).toBe("disabled");
      expect(u.daemon.status().reasons[0]?.detail).not.toContain("members' plan vends continue");
      expect(u.display.screens.at(-1)).toMatchObject({ kind: "outOfService" });
    } finally {
      await u.daemon.stop();
    }
  }, 60_000);
});
