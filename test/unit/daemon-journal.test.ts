import { rmSync } from "node:fs";
import { Writable } from "node:stream";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import { JournalError } from "../../src/journal/journal.js";
import { openSqliteJournal, type SqliteJournal } from "../../src/journal/sqlite.js";
import type { PaymentDriver } from "../../src/payment/driver.js";
import { SimPaymentDriver } from "../../src/payment/sim.js";
import {
  NOWHERE,
  recordingNotifier,
  startTestDaemon,
  type TestDaemon,
  tempDir,
  v10Unit,
} from "../support/inprocess.js";

let dir: string;
let unit: TestDaemon | undefined;
afterEach(async () => {
  await unit?.daemon.stop();
  unit = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A payment driver that must never be used: every call is counted and fails. */
function untouchable(): { driver: PaymentDriver; calls: string[] } {
  const calls: string[] = [];
  const driver = new Proxy({ kind: "sim" } as PaymentDriver, {
    get(target, key) {
      if (key === "kind") return target.kind;
      if (key === "close") return async () => {};
      return async () => {
        calls.push(String(key));
        throw new Error(`payment.${String(key)} must not be called`);
      };
    },
  });
  return { driver, calls };
}

/** The journal's start-up check failing, as the journal's contract throws it. */
function unusable(code: string): JournalError {
  return Object.assign(
    new JournalError("integrity", "journal check failed: database disk image is malformed", {
      cause: "database disk image is malformed",
    }),
    {
      code,
      path: "/var/lib/vendd/journal.db",
      nextStep:
        "Restore the journal from a backup, or move it aside and start fresh (README: Recovering a unit).",
    },
  );
}

function logCapture() {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(chunk.toString("utf8"));
      cb();
    },
  });
  return { logger: pino({ level: "info" }, out), lines };
}

describe("journal unusable at start", () => {
  it("stays up out of service with the cause on the screen, path + cause + next step on stderr and in the log; nothing else opened", async () => {
    dir = tempDir();
    const payment = untouchable();
    const { logger, lines } = logCapture();
    const stderr: string[] = [];
    unit = await startTestDaemon(v10Unit(dir, "vm-j", NOWHERE), {
      deps: {
        logger,
        stderr: (t) => stderr.push(t),
        openJournal: () => {
          throw unusable("integrity");
        },
        devices: { payment: payment.driver },
      },
    });
    const u = unit;
    expect(u.display.last()).toEqual({ kind: "outOfService", reason: "database disk image is malformed" });
    const err = stderr.join("");
    expect(err).toContain("/var/lib/vendd/journal.db");
    expect(err).toContain("database disk image is malformed");
    expect(err).toContain("move it aside and start fresh");
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === 50);
    expect(logged).toMatchObject({
      path: "/var/lib/vendd/journal.db",
      cause: "database disk image is malformed",
      nextStep: expect.stringContaining("Restore the journal"),
    });
    expect(u.notifier.readies).toEqual([
      "out of service: journal /var/lib/vendd/journal.db unusable: database disk image is malformed",
    ]);
    expect(u.daemon.status()).toEqual({
      inService: false,
      reasons: [expect.objectContaining({ code: "journal", retryAt: null })],
    });
    await u.advance(120_000);
    expect(payment.calls).toEqual([]);
    expect(u.enabledWithUnresolved).toEqual([]);
    expect(u.vmc.status).toBe("disabled");
    expect(u.daemon.status().inService).toBe(false);
  });

  it("a journal locked by another process is refused at once: startDaemon rejects, nothing is shown or sent", async () => {
    dir = tempDir();
    const payment = untouchable();
    const notifier = recordingNotifier();
    const start = startDaemon(v10Unit(dir, "vm-l", NOWHERE), {
      logger: pino({ level: "silent" }),
      notifier,
      clock: new ManualClock(),
      openJournal: () => {
        throw unusable("locked");
      },
      devices: { payment: payment.driver },
    });
    await expect(start).rejects.toMatchObject({ code: "locked" });
    expect(payment.calls).toEqual([]);
    expect(notifier.readies).toEqual([]);
  });
});

/**
 * Wraps the journal so a test can make every write fail as SQLite does on a full disk (or with another
 * code); `probes` counts the daemon's re-check writes while it fails.
 */
function failing(j: SqliteJournal, fault: { code: string | null; probes: number }): SqliteJournal {
  const error = (code: string) =>
    new JournalError("io", "journal write failed: database or disk is full", {
      cause: new Database.SqliteError("database or disk is full", code),
    });
  return Object.assign(Object.create(j) as SqliteJournal, {
    atomically<T>(fn: () => T, opts?: { durable?: boolean }): T {
      if (fault.code !== null) throw error(fault.code);
      return j.atomically(fn, opts);
    },
    event(...args: Parameters<SqliteJournal["event"]>): void {
      if (fault.code !== null) {
        fault.probes++;
        throw error(fault.code);
      }
      j.event(...args);
    },
  });
}

async function unitWithFailingJournal(code: string) {
  const fault = { code: null as string | null, probes: 0 };
  dir = tempDir();
  const clock = new ManualClock(Date.now());
  const payment = new SimPaymentDriver({ clock, customer: () => ({ action: "accept", afterMs: 1500 }) });
  let journal: SqliteJournal | undefined;
  const u = await startTestDaemon(v10Unit(dir, "vm-f", NOWHERE), {
    clock,
    deps: {
      policy: { baseDelayMs: 1000, maxDelayMs: 8000 },
      openJournal: (o, d) => {
        journal = openSqliteJournal({ ...o, ...d });
        return failing(journal, fault);
      },
      devices: { payment },
    },
  });
  await u.until(() => u.daemon.status().inService, 10_000, "in service");
  // A sale starts; once its payment exists at the service, the disk fills up.
  u.vmc.requestVend(1, 200);
  await u.until(() => payment.calls.some((c) => c.op === "start"), 10_000, "payment started");
  fault.code = code;
  return { u, fault, payment, journal: () => journal ?? expect.unreachable() };
}

describe("journal write failures in service", () => {
  it("disk full: out of service, re-checked with backoff at idle, back in service once space is freed, the broken sale settled first", async () => {
    const { u, fault, payment, journal } = await unitWithFailingJournal("SQLITE_FULL");
    unit = u;
    await u.until(() => u.codes().includes("journal"), 10_000, "out of service");
    expect(u.vmc.status).toBe("disabled");
    expect(u.display.last()).toEqual({ kind: "outOfService", reason: "Journal cannot be written" });
    await u.advance(30_000);
    expect(u.daemon.status().inService).toBe(false);
    expect(fault.probes).toBeGreaterThanOrEqual(3);
    expect(fault.probes).toBeLessThanOrEqual(8);

    fault.code = null;
    await u.until(() => u.daemon.status().inService, 20_000, "back in service");
    expect(u.vmc.status).toBe("enabled");
    expect(u.enabledWithUnresolved.at(-1)).toBe(0);
    expect(journal().unresolved()).toEqual([]);
    expect(journal().sessions()[0]?.result).toBe("cancelled");
    expect(payment.ledger.filter((e) => e.kind === "captured")).toEqual([]);
    expect(u.display.last()).toMatchObject({ kind: "idle" });
    // And it sells again.
    u.vmc.requestVend(2, 300);
    await u.until(
      () =>
        journal()
          .sessions()
          .some((s) => s.result === "captured"),
      20_000,
      "a sale",
    );
    expect(payment.ledger.filter((e) => e.kind === "captured").map((e) => e.amount)).toEqual([300]);
  });

  it("a failed fsync does not heal: out of service for good, no re-check", async () => {
    const { u, fault } = await unitWithFailingJournal("SQLITE_IOERR_FSYNC");
    unit = u;
    await u.until(() => u.codes().includes("failure"), 10_000, "out of service");
    await u.advance(60_000);
    expect(fault.probes).toBe(0);
    expect(u.daemon.status()).toEqual({
      inService: false,
      reasons: [expect.objectContaining({ code: "failure", retryAt: null })],
    });
    expect(u.vmc.status).toBe("disabled");
  });
});
