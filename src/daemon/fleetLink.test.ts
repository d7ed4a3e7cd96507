import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeFleet } from "../../test/support/fakeFleet.js";
import { ManualClock } from "../core/clock.js";
import { generateUnitKey } from "../core/fleetAuth.js";
import { Heartbeat, UnitEvent } from "../core/fleetWire.js";
import { openSqliteJournal, type SqliteJournal } from "../journal/sqlite.js";
import { FleetLink, type FleetLinkOptions } from "./fleetLink.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UNIT = "vm-f";

let fleet: FakeFleet;
let clock: ManualClock;
let journal: SqliteJournal;
beforeEach(async () => {
  clock = new ManualClock(1_800_000_000_000);
  fleet = await FakeFleet.start({ now: () => clock.now() });
  journal = openSqliteJournal({ path: ":memory:", unitId: UNIT, clock, outbox: { currency: "DKK" } });
});
afterEach(async () => {
  journal.close();
  await fleet.close();
});

let n = 0;
function sale(price = 150): void {
  const id = `s${++n}`;
  const orderId = journal.nextOrderId();
  journal.openSession({ id, orderId, flow: "selection", item: 2, price, driver: "sim" });
  journal.approveVend(id, 2, price);
  journal.recordVend(id, "success");
  journal.decide(id, { action: "capture", amount: price, reason: "vended", review: false });
  const cap = journal.recordIntent({ sessionId: id, op: "capture", orderId, paymentId: null, amount: price });
  journal.completeIntent(cap.id, "done", "ok");
  journal.closeSession(id, "captured", "vended");
}

/** A seeded jitter source. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function link(over: Partial<FleetLinkOptions> = {}): FleetLink {
  return new FleetLink({
    url: fleet.url,
    unitId: UNIT,
    key: generateUnitKey(),
    outbox: journal,
    clock,
    random: seeded(7),
    logger: pino({ level: "silent" }),
    heartbeat: () => ({
      state: "inService",
      reason: "",
      versions: { vendd: "0.1.0", config: "3", release: null },
      journal: { ok: true, detail: "ok" },
      vmc: "up",
      payment: "up",
      unresolved: 0,
    }),
    heartbeatMs: 60_000,
    batchEvents: 10,
    backlogWarnEvents: 1000,
    backlogWarnMs: 24 * HOUR,
    timeoutMs: 500,
    ...over,
  });
}

/** Runs rounds, advancing the clock by each wait, until `done` (bounded). */
async function drive(l: FleetLink, done: () => boolean, max = 100): Promise<number> {
  for (let i = 0; i < max; i++) {
    if (done()) return i;
    clock.advance(await l.round());
  }
  throw new Error(`not done after ${max} rounds`);
}

function storedSeqs(): number[] {
  return fleet.stored(UNIT).map((e) => e.seq);
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("fleet link", () => {
  it("sends signed batches in seq order, marks them delivered and sends a valid heartbeat", async () => {
    for (let i = 0; i < 25; i++) sale();
    journal.report("fault", { code: "vmcLink", state: "raised", message: "VMC link lost" });
    const l = link();
    await drive(l, () => journal.outboxStats().events === 0);
    expect(storedSeqs()).toEqual(range(1, 26));
    expect(fleet.received).toBe(26);
    expect(fleet.refusals).toEqual([]);
    for (const e of fleet.stored(UNIT)) UnitEvent.parse(e);
    expect(fleet.heartbeats).toHaveLength(1);
    const hb = Heartbeat.parse(fleet.heartbeats[0]);
    expect(hb.backlog).toMatchObject({ events: 26, lastSeq: 26 });
    expect(l.status()).toMatchObject({ state: "ok", backlog: 0, warning: null });
    expect(l.status().lastAckAt).toBeGreaterThanOrEqual(1_800_000_000_000);
  });

  it("delivers every event exactly once through lost acks, 5xx answers and timeouts", async () => {
    const l = link();
    await l.round(); // the heartbeat: the faults below hit batches
    for (let i = 0; i < 40; i++) sale();
    fleet.dropNext(2);
    fleet.failNext(2, 503);
    fleet.hangNext(1);
    fleet.dropNext(1);
    fleet.failNext(1, 500);
    await drive(l, () => journal.outboxStats().events === 0, 50);
    expect(storedSeqs()).toEqual(range(1, 40));
    expect(fleet.received).toBeGreaterThan(40); // batches whose ack was lost were sent again
    expect(fleet.refusals.filter((r) => r !== "unavailable")).toEqual([]);
    expect(journal.outboxPending(100)).toEqual([]);
  });

  it("shows notApproved on a 403 and retries slowly", async () => {
    sale();
    fleet.setAlways("refuse");
    const l = link({ notApprovedMs: 900_000 });
    expect(await l.round()).toBe(900_000);
    expect(l.status()).toMatchObject({ state: "notApproved", backlog: 1 });
    fleet.setAlways(null);
    clock.advance(900_000);
    await l.round();
    expect(l.status()).toMatchObject({ state: "ok", backlog: 0 });
  });

  it("keeps a week of backlog while the fleet is unreachable, bounded attempts, then delivers all once in order", async () => {
    fleet.setAlways("down");
    const l = link({ batchEvents: 200 });
    const start = clock.now();
    let nextSale = start;
    let warnedAt: number | null = null;
    let rounds = 0;
    while (clock.now() - start < 7 * DAY) {
      while (nextSale <= clock.now()) {
        sale();
        nextSale += HOUR;
      }
      clock.advance(await l.round());
      rounds++;
      const s = l.status();
      expect(s.state).toBe("unreachable");
      if (warnedAt === null && s.warning !== null) warnedAt = clock.now() - start;
    }
    // Backoff capped at 10 min with equal jitter: at least 5 min between attempts.
    expect(rounds).toBeLessThanOrEqual((7 * DAY) / 300_000 + 20);
    expect(fleet.requests).toBe(rounds);
    expect(warnedAt).not.toBeNull();
    expect(warnedAt ?? 0).toBeGreaterThan(24 * HOUR);
    expect(warnedAt ?? 0).toBeLessThan(25 * HOUR);
    const backlog = journal.outboxStats().events;
    expect(backlog).toBeGreaterThanOrEqual(168);
    expect(l.status().warning).toMatch(/h old/);
    fleet.setAlways(null);
    await drive(l, () => journal.outboxStats().events === 0, 20);
    expect(storedSeqs()).toEqual(range(1, backlog));
    expect(fleet.received).toBe(backlog);
    expect(l.status()).toMatchObject({ state: "ok", warning: null });
  });

  it("renumbers a replaced journal's events above what the fleet committed", async () => {
    const key = generateUnitKey();
    fleet.seed(UNIT, key.publicKey, 50);
    sale();
    sale();
    const l = link({ key });
    await drive(l, () => journal.outboxStats().events === 0);
    expect(storedSeqs()).toEqual(range(1, 52));
    expect(
      fleet
        .stored(UNIT)
        .slice(50)
        .map((e) => e.kind),
    ).toEqual(["session", "session"]);
    expect(journal.outboxStats().lastSeq).toBe(52);
  });

  it("sends again what a fleet restored from an older backup lacks; what retention deleted comes as tombstones", async () => {
    for (let i = 0; i < 5; i++) sale();
    clock.advance(40 * DAY);
    for (let i = 0; i < 5; i++) sale();
    const l = link();
    await drive(l, () => journal.outboxStats().events === 0);
    expect(storedSeqs()).toEqual(range(1, 10));
    // Retention deletes the delivered events 1-5; then the fleet comes back from a backup that had 1-3.
    expect(journal.retainOutbox(clock.now() - 35 * DAY, clock.now() - 42 * DAY).deleted).toBe(5);
    fleet.restore(UNIT, 3);
    sale();
    await drive(l, () => journal.outboxStats().events === 0 && fleet.committed(UNIT) === 11);
    expect(storedSeqs()).toEqual(range(1, 11));
    const again = fleet.stored(UNIT).slice(3);
    expect(again.map((e) => e.kind)).toEqual([
      "fault",
      "fault",
      "session",
      "session",
      "session",
      "session",
      "session",
      "session",
    ]);
    expect(again[0]?.data).toMatchObject({ code: "outboxOverflow" });
    expect(l.status()).toMatchObject({ state: "ok", backlog: 0 });
  });

  it("fetches the entitlement list when the heartbeat advertises a new ETag; a failure is retried and never stops the outbox", async () => {
    const calls: (string | null)[] = [];
    let failing = false;
    const l = link({
      entitlements: async (held) => {
        calls.push(held);
        if (failing) throw new Error("fleet answered 500");
        return `"e${calls.length}"`;
      },
    });
    // No list advertised: nothing fetched.
    await l.round();
    expect(calls).toEqual([]);
    fleet.entitlementsEtag = '"e1"';
    clock.advance(60_000);
    await l.round();
    expect(calls).toEqual([null]);
    expect(l.heldEntitlementsEtag()).toBe('"e1"');
    // Same ETag at the next heartbeats: no fetch.
    clock.advance(60_000);
    await l.round();
    expect(calls).toHaveLength(1);
    // A new list, and the fetch fails: the list held stays, sales still go out, retried at the next heartbeat.
    fleet.entitlementsEtag = '"e2"';
    failing = true;
    sale();
    clock.advance(60_000);
    const wait = await l.round();
    expect(calls).toEqual([null, '"e1"']);
    expect(l.heldEntitlementsEtag()).toBe('"e1"');
    expect(l.status().state).toBe("ok");
    expect(wait).toBeLessThanOrEqual(60_000);
    expect(fleet.stored(UNIT)).toHaveLength(1);
    failing = false;
    clock.advance(60_000);
    await l.round();
    expect(calls).toEqual([null, '"e1"', '"e1"']);
    expect(l.heldEntitlementsEtag()).toBe('"e3"');
  });

  it("issue 41: a heartbeat's bundle hint fetches at once after a jitter within its bound, not at the pull timer; once per ETag; a failure is retried at the next heartbeat", async () => {
    const fetched: { at: number; held: string | null }[] = [];
    let failing = false;
    const l = link({
      heartbeatMs: 60_000,
      random: () => 0.5,
      bundles: {
        held: '"old"',
        jitterMs: 20_000,
        fetch: async (held) => {
          fetched.push({ at: clock.now(), held });
          if (failing) throw new Error("HTTP 500");
          return fleet.bundleEtag;
        },
      },
    });
    // The ETag the unit holds: nothing to fetch.
    fleet.bundleEtag = '"old"';
    const t0 = clock.now();
    await drive(l, () => clock.now() >= t0 + 30_000);
    expect(fetched).toEqual([]);
    // A new bundle: fetched 10 s (the drawn half of the 20 s bound) after the heartbeat that told of it.
    fleet.bundleEtag = '"new"';
    clock.advance(60_000 - (clock.now() - t0));
    const told = clock.now();
    await drive(l, () => fetched.length > 0);
    expect(fetched).toEqual([{ at: told + 10_000, held: '"old"' }]);
    expect(l.heldBundleEtag()).toBe('"new"');
    // The same hint at the next heartbeats: nothing more.
    await drive(l, () => clock.now() >= told + 180_000);
    expect(fetched).toHaveLength(1);
    // A failed fetch keeps the held ETag and is tried again after the next heartbeat's hint.
    fleet.bundleEtag = '"newer"';
    failing = true;
    await drive(l, () => fetched.length > 1);
    expect(l.heldBundleEtag()).toBe('"new"');
    expect(l.status().state).toBe("ok");
    failing = false;
    await drive(l, () => fetched.length > 2);
    expect(fetched[2]?.at).toBeGreaterThanOrEqual((fetched[1]?.at ?? 0) + 50_000);
    expect(l.heldBundleEtag()).toBe('"newer"');
  });

  it("warns when the backlog exceeds backlogWarnEvents", () => {
    for (let i = 0; i < 4; i++) sale();
    expect(link({ backlogWarnEvents: 3 }).status().warning).toBe("4 events wait for the fleet (more than 3)");
  });
});
