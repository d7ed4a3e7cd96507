import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BUDGETS,
  type BudgetInterface,
  type BudgetOperation,
  budgetOf,
  DEFAULT_PARAMS,
  LIMITS,
  worstCase,
} from "./budget.js";
import { DEFAULT_RETRY_POLICY } from "./retry.js";

/**
 * The written budget (PaymentDriver doc comment, driver.ts) is the table's worst case at the defaults:
 * raising a limit in budget.ts, or a default timeout or retry count, fails here until the doc says so.
 */

interface DocRow {
  op: string;
  v10: { requests: number; timeMs: number } | null;
  legacy: { requests: number; timeMs: number } | null;
}

const DASH = "–";

function cell(requests: string, time: string): DocRow["v10"] {
  if (requests === DASH && time === DASH) return null;
  const seconds = /^(\d+(?:\.\d+)?) s$/.exec(time);
  if (!/^\d+$/.test(requests) || seconds === null) throw new Error(`unreadable cell: ${requests} | ${time}`);
  return { requests: Number(requests), timeMs: Math.round(Number(seconds[1]) * 1000) };
}

/** The rows of the budget table in the PaymentDriver doc comment. */
function docRows(): DocRow[] {
  const text = readFileSync(new URL("./driver.ts", import.meta.url), "utf8");
  const rows: DocRow[] = [];
  for (const line of text.split("\n")) {
    const m = /^ \* \| (\w+) +\| ([^|]+?) +\| ([^|]+?) +\| ([^|]+?) +\| ([^|]+?) +\|$/.exec(line);
    if (m === null || m[1] === "operation") continue;
    const [, op = "", r1 = "", t1 = "", r2 = "", t2 = ""] = m;
    rows.push({ op, v10: cell(r1, t1), legacy: cell(r2, t2) });
  }
  return rows;
}

const IFACES: BudgetInterface[] = ["v10", "legacy"];

describe("the written retry budget", () => {
  const rows = docRows();

  it("lists every operation of the table once", () => {
    const ops = new Set(IFACES.flatMap((i) => Object.keys(BUDGETS[i])));
    expect(rows.map((r) => r.op).sort()).toEqual([...ops].sort());
  });

  for (const iface of IFACES) {
    it(`states the ${iface} worst case of each operation at the defaults`, () => {
      for (const row of rows) {
        const op = row.op as BudgetOperation;
        const stated = row[iface];
        if (BUDGETS[iface][op] === undefined) {
          expect(stated, `${iface} ${op} has no budget, so the doc says –`).toBeNull();
          continue;
        }
        expect(stated, `${iface} ${op}`).toEqual(worstCase(iface, op));
      }
    });
  }
});

describe("budget table", () => {
  it("is frozen", () => {
    expect(Object.isFrozen(BUDGETS)).toBe(true);
    expect(Object.isFrozen(BUDGETS.v10)).toBe(true);
    expect(Object.isFrozen(budgetOf("v10", "capture").slots)).toBe(true);
    expect(Object.isFrozen(budgetOf("legacy", "capture").slots[0])).toBe(true);
    expect(Object.isFrozen(LIMITS)).toBe(true);
  });

  it("multiplies the layers: V10 capture = POST ×3 + two reads ×3, each at its timeout plus backoffs", () => {
    expect(worstCase("v10", "capture")).toEqual({
      requests: 3 + 3 + 3,
      timeMs: 3 * 2000 + 300 + 2 * (3 * 500 + 300),
    });
  });

  it("the older interface's transport sends once; its driver repeats once after ≤ one first backoff", () => {
    expect(worstCase("legacy", "capture")).toEqual({ requests: 1 + 2 + 1, timeMs: 4 * 2000 + 100 });
  });

  it("follows the parameters: more retries, other timeouts, another poll delay", () => {
    const p = DEFAULT_PARAMS.v10;
    const five = worstCase("v10", "status", { ...p, policy: { ...DEFAULT_RETRY_POLICY, max: 5 } });
    expect(five).toEqual({ requests: 6, timeMs: 6 * 500 + (100 + 200 + 400 + 800 + 1600) });
    // pos-v10 §12: never more than 5 retries, whatever the configuration says.
    expect(worstCase("v10", "status", { ...p, policy: { ...DEFAULT_RETRY_POLICY, max: 9 } })).toEqual(five);
    const fast = worstCase("v10", "refund", {
      ...p,
      timeouts: { postMs: 50, getMs: 20 },
      refundPollDelayMs: 10,
    });
    expect(fast).toEqual({ requests: 20, timeMs: 2 * (3 * 50 + 300) + 11 * 20 + 10 * 15 + (3 * 20 + 300) });
  });

  it("refuses an operation the interface does not have", () => {
    expect(() => worstCase("legacy", "token")).toThrow(/no token budget/);
  });
});
