import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CellEnv, FAULTS, type FaultOp, recordErrors } from "./fault-kit.js";
import { OPS } from "./fault-ops.js";
import {
  type ContractWorld,
  type DriverKind,
  KINDS,
  startContractWorld,
  type UnitTuning,
} from "./support.js";

/**
 * The fault matrix (reliability.md §2.3, pos-v10 §9/§12, pos-legacy §11): every mutating call of each driver
 * × {hang past the client timeout, 500, reset after apply, lost response, 409}, one `it` per cell, generated
 * from the tables in fault-ops.ts. After each cell the emulator's ledger shows exactly one effect per
 * intent, and the caller got the right result, or a typed non-ambiguous error for a 409 that applied
 * nothing (after which the same intent, repeated, lands once).
 *
 * Bounded and repeatable: small client timeouts (V10 250 ms per request, older interface 300 ms), V10
 * backoffs of 10-40 ms, fixed order ids and keys derived from the cell name, one fault use per cell. The
 * only randomness is the retry jitter (Math.random: the contract world does not seed the factory), which
 * changes delays of a few ms, never outcomes. test/payment/contract/budget.test.ts repeats each fault on every
 * attempt and counts the requests.
 */
const TUNING: UnitTuning = {
  v10Timeouts: { postMs: 250, getMs: 250 },
  v10Retries: { max: 2, baseDelayMs: 10, maxDelayMs: 40 },
  legacyTimeoutMs: 300,
};

let w: ContractWorld;
beforeAll(async () => {
  w = await startContractWorld();
});
afterEach(() => w.emu.faults.clear());
afterAll(() => w.close());

function cellEnv(kind: DriverKind, op: FaultOp, fault: string): CellEnv {
  const unit = w.unit(kind, TUNING);
  return {
    w,
    kind,
    orderId: `${kind}-${op.id}-${fault}`,
    async connect() {
      const c = await w.connect(unit);
      const rec = recordErrors(c.driver);
      return { driver: rec.driver, pos: c.pos, errors: rec.errors };
    },
    posCreates: () => w.emu.stats().byRoute["POST /v10/pointofsales"] ?? 0,
  };
}

describe.each(KINDS)("%s driver: fault matrix", (kind) => {
  const cells = OPS.filter((op) => op.kinds.includes(kind)).flatMap((op) =>
    FAULTS.map((f) => [`${op.label} × ${f.label}`, op, f] as const),
  );

  it.each(cells)("%s", async (_, op, f) => {
    const path = op.path[kind];
    if (path === undefined) throw new Error(`no fault path for ${op.id} on ${kind}`);
    const before = w.emu.stats().faults[f.rule.fault] ?? 0;
    const arm = () => w.emu.faults.add({ ...f.rule, method: "POST", path, count: 1 });
    await op.run(cellEnv(kind, op, f.name), arm, f.name === "409");
    // The fault was actually hit, exactly once.
    expect(w.emu.stats().faults[f.rule.fault] ?? 0).toBe(before + 1);
  });
});
