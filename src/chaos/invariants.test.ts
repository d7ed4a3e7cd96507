import { describe, expect, it } from "vitest";
import type { LedgerEntry } from "../emulator/types.js";
import type { SessionRow } from "../journal/journal.js";
import { checkInvariants, type InvariantInput } from "./invariants.js";
import { analyseTrace } from "./straceOrder.js";

// The checkers must catch what they look for: a checker that always says "consistent" would make every
// crash test pass vacuously.

function session(over: Partial<SessionRow> = {}): SessionRow {
  return {
    id: "s1",
    orderId: "o1",
    flow: "selection",
    item: 2,
    price: 150,
    driver: "v10",
    paymentId: "p1",
    openedAt: 1,
    approvedAmount: 150,
    vendOutcome: "success",
    decision: { action: "capture", amount: 150, reason: "vend delivered", review: false },
    result: "captured",
    reason: "vend delivered",
    closedAt: 2,
    ...over,
  };
}

let seq = 0;
function entry(kind: LedgerEntry["kind"], amount = 150, id = "p1"): LedgerEntry {
  return { seq: ++seq, interface: "v10", id, paymentId: null, orderId: "o1", kind, amount, at: seq };
}

function input(over: Partial<InvariantInput> = {}): InvariantInput {
  return {
    journal: {
      sessions: [session()],
      vends: [{ id: 1, sessionId: "s1", item: 2, price: 150, outcome: "success" }],
      intents: [],
      integrity: "ok",
    },
    ledger: [entry("reserved"), entry("captured")],
    approvals: [{ item: 2, price: 150, amount: 150 }],
    vends: [{ item: 2, price: 150, outcome: "success" }],
    violations: [],
    ...over,
  };
}

describe("checkInvariants", () => {
  it("accepts one vend delivered and captured once", () => {
    expect(checkInvariants(input()).problems).toEqual([]);
  });

  it("finds a payment captured twice, and one left reserved", () => {
    const twice = checkInvariants(
      input({ ledger: [entry("reserved"), entry("captured"), entry("captured")] }),
    );
    expect(twice.problems.join("\n")).toMatch(/captured 2 times/);
    const held = checkInvariants(input({ ledger: [entry("reserved"), entry("reserved", 100, "p9")] }));
    expect(held.problems.join("\n")).toMatch(/p9 .*left reserved/);
  });

  it("finds an approval the journal never recorded", () => {
    const r = checkInvariants(input({ approvals: [{ item: 7, price: 170, amount: 170 }] }));
    expect(r.problems.join("\n")).toMatch(/approval of item 7 at 170 has no journaled vend row/);
  });

  it("finds a delivered vend journaled as failed, and a capture the vends do not imply", () => {
    const journal = {
      ...input().journal,
      vends: [{ id: 1, sessionId: "s1", item: 2, price: 150, outcome: "failure" as const }],
    };
    const r = checkInvariants(input({ journal }));
    expect(r.problems.join("\n")).toMatch(/delivered but journaled failure/);
    expect(r.problems.join("\n")).toMatch(/captured 150, vends imply 0/);
  });

  it("finds a bad integrity check and an open session", () => {
    const journal = {
      ...input().journal,
      integrity: "*** in database main ***",
      sessions: [session({ closedAt: null, result: null })],
    };
    const r = checkInvariants(input({ journal }));
    expect(r.problems.join("\n")).toMatch(/integrity_check/);
    expect(r.problems.join("\n")).toMatch(/not settled/);
  });
});

describe("analyseTrace", () => {
  const wal = "/j/journal.db-wal";
  const post = (key: string) =>
    `7 writev(21<TCP:[127.0.0.1:1->127.0.0.1:2]>, [{iov_base="POST /v10/payments HTTP/1.1\\r\\nx-service-idempotency-key: ${key}\\r\\n"}], 2) = 99`;
  const key = "8d940fd4-7c0b-46a9-9a03-448ab2017d00";
  const frame = `7 pwrite64(19<${wal}>, "...${key}...", 4120, 32) = 4120`;
  const sync = `7 fsync(19<${wal}>) = 0`;
  const resolve = () => key;

  it("accepts a request sent after its intent's frame was written and synced", () => {
    const r = analyseTrace([frame, sync, post(key)].join("\n"), wal, resolve);
    expect(r.mutations).toMatchObject([{ syscall: "writev", syncsBefore: 1, keyDurableFirst: true }]);
  });

  it("rejects a request sent before the sync, even with an older sync before it", () => {
    const r = analyseTrace([sync, frame, post(key), sync].join("\n"), wal, resolve);
    expect(r.mutations[0]?.keyDurableFirst).toBe(false);
  });

  it("counts an unfinished fsync at its resumed line only", () => {
    const r = analyseTrace(
      [frame, `7 fsync(19<${wal}> <unfinished ...>`, post(key), "7 <... fsync resumed>) = 0"].join("\n"),
      wal,
      resolve,
    );
    expect(r.mutations[0]?.syncsBefore).toBe(0);
    expect(r.mutations[0]?.keyDurableFirst).toBe(false);
  });
});
