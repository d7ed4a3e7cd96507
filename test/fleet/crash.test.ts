/**
 * SIGKILL of the unit at each step of sending (issue 16): a child process runs the fleet sender over a real
 * journal file and is killed at a fault point (before a batch is posted, after the fleet answered but before
 * the events are marked delivered, after the mark); then a new process takes over. Every event must reach
 * the fleet exactly once, in seq order. Runs the built code (`npx tsc -p tsconfig.build.json`).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { FLEET_FAULT_POINTS } from "../../src/core/faults.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { UnitEvent } from "../../src/core/fleetWire.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { FakeFleet } from "../support/fakeFleet.js";
import { runSenderProcess } from "../support/senderProcess.js";

const UNIT = "vm-kill";

let dir: string;
let fleet: FakeFleet;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-fleet-kill-"));
  fleet = await FakeFleet.start();
});
afterEach(async () => {
  await fleet.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Appends `count` closed sales to the journal file (the lock is free: no sender runs). */
function addSales(path: string, from: number, count: number): void {
  const j = openSqliteJournal({ path, unitId: UNIT, clock: systemClock, outbox: { currency: "DKK" } });
  for (let i = from; i < from + count; i++) {
    const id = `s${i}`;
    j.openSession({
      id,
      orderId: j.nextOrderId(),
      flow: "selection",
      item: i % 7,
      price: 100 + i,
      driver: "sim",
    });
    j.closeSession(id, "denied", "refused");
  }
  j.close();
}

/** The sender in its own process until the backlog is empty (exit 0), or killed at the armed point. */
function runSender(
  path: string,
  keyFile: string,
  faultPoint: string | null,
): Promise<NodeJS.Signals | number> {
  return runSenderProcess({
    journal: path,
    unitId: UNIT,
    keyFile,
    fleetUrl: fleet.url,
    currency: "DKK",
    batchEvents: 7,
    faultPoint,
  });
}

describe("fleet sender killed at each step", () => {
  it.each(FLEET_FAULT_POINTS.map((p) => [p]))(
    "SIGKILL at %s, then a restart: every event once, in order",
    async (point) => {
      expect(existsSync(resolve("dist/src/daemon/fleetLink.js")), "build first").toBe(true);
      const path = join(dir, "journal.db");
      const keyFile = join(dir, "fleet.key");
      writeFileSync(keyFile, generateUnitKey().privatePem, { mode: 0o600 });
      addSales(path, 1, 20);
      // Killed in its second batch (the first heartbeat marks nothing: its committed is 0).
      expect(await runSender(path, keyFile, `${point}@2`)).toBe("SIGKILL");
      const before = fleet.stored(UNIT).length;
      expect(before).toBeLessThan(20);
      addSales(path, 21, 5);
      expect(await runSender(path, keyFile, null)).toBe(0);
      const stored = fleet.stored(UNIT);
      // Killed between the fleet's commit and the mark: the restart's first heartbeat carries the fleet's
      // committed, so those events are marked delivered without being sent again.
      expect(fleet.received).toBe(25);
      expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(
        stored.map((e) => {
          const ev = UnitEvent.parse(e);
          return ev.kind === "session" ? ev.data.sessionId : ev.kind;
        }),
      ).toEqual(Array.from({ length: 25 }, (_, i) => `s${i + 1}`));
      const j = openSqliteJournal({ path, unitId: UNIT, clock: systemClock, outbox: { currency: "DKK" } });
      expect(j.outboxStats()).toMatchObject({ events: 0, lastSeq: 25 });
      j.close();
    },
  );
});
