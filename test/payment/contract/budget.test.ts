import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FaultRule } from "../../../src/emulator/index.js";
import { type WorstCase, worstCase } from "../../../src/payment/budget.js";
import { PaymentError } from "../../../src/payment/errors.js";
import { type BudgetWorld, PARAMS, startBudgetWorld } from "./budget-kit.js";
import { BUDGET_OPS, type BudgetOp } from "./budget-ops.js";
import { FAULTS } from "./fault-kit.js";

/**
 * The retry budget test (issue 11): every mutating call of each driver under the worst fault schedules the
 * emulator can produce — hang past the timeout, 500 after apply, reset after apply, lost response, 409 —
 * repeated on EVERY attempt: on the call's mutation (applied; and a 500 that applied nothing), on every
 * request it makes,
 * and, where uniform faults cannot reach it, a mixed schedule down the call's longest path. For each cell
 * the requests the emulator received and the (emulator) time to a final answer must stay within the worst
 * case that budget.ts derives from its table — the table the drivers read their limits from and the
 * PaymentDriver doc states — and the money moves at most once (never two effects of one kind on one order,
 * never both captured and cancelled).
 *
 * Bounded and repeatable: the drivers' default timeouts and retries, so the budget is the very figures
 * the doc states; emulator time frozen except where the drivers' clock moves it, a hung request's deadline
 * fired as soon as the emulator hangs it (budget-kit.ts: a hang costs its timeout in emulator time and a
 * millisecond of real time); seeded jitter per cell; a fresh PoS per cell.
 * `BUDGET_REPORT=1` prints each cell's figures.
 */
const SCOPES = ["mutation", "mutation, not applied", "every request"] as const;
type Scope = (typeof SCOPES)[number] | "its deepest path";
const EVERY_ATTEMPT = 1000;

let w: BudgetWorld;
let cellNo = 0;
beforeAll(async () => {
  w = await startBudgetWorld();
});
afterEach(() => w.emu.faults.clear());
afterAll(() => w.close());

const report: string[] = [];
afterAll(() => {
  if (process.env.BUDGET_REPORT === "1") console.log(report.join("\n"));
});

/** The cell's fault rules: the column's fault on every attempt of the mutation, or on every request. */
function schedule(op: BudgetOp, rule: Omit<FaultRule, "path" | "method">, scope: Scope): FaultRule[] {
  if (scope === "every request") return [{ ...rule, path: "/**", count: EVERY_ATTEMPT }];
  const applied = scope === "mutation" ? rule.applied : false;
  return op.paths.map((path) => ({
    ...rule,
    ...(applied === undefined ? {} : { applied }),
    method: "POST",
    path,
    count: EVERY_ATTEMPT,
  }));
}

const total = (byKind: Record<string, number>): number => Object.values(byKind).reduce((a, n) => a + n, 0);

/** How a call ended, for the report: an engine result, a driver's answer, or its PaymentError. */
function outcome(answer: unknown): string {
  if (answer instanceof PaymentError) return `${answer.code}${answer.ambiguous ? " (ambiguous)" : ""}`;
  if (typeof answer === "object" && answer !== null) {
    if ("kind" in answer) return String(answer.kind);
    if ("ok" in answer) return answer.ok === true ? "settled" : "left for recovery";
  }
  return "answered";
}

describe.each(BUDGET_OPS)("$kind $id: within its retry budget", (op) => {
  const budget = [op.budget, ...(op.plus ?? [])]
    .map((b) => worstCase(op.kind, b, PARAMS[op.kind]))
    .reduce((a: WorstCase, b) => ({ requests: a.requests + b.requests, timeMs: a.timeMs + b.timeMs }));
  const cells: [string, FaultRule[], Scope][] = [];
  for (const f of FAULTS) {
    for (const scope of SCOPES) {
      // Not applied: one representative (a hang, reset or loss that applied nothing looks the same to the
      // client: an ambiguous failure), where it matters (a status query then finds nothing).
      if (scope === "mutation, not applied" && f.name !== "500") continue;
      cells.push([`${f.label}, on ${scope}`, schedule(op, f.rule, scope), scope]);
    }
  }
  if (op.deepest) cells.push(["mixed faults down its longest path", [...op.deepest], "its deepest path"]);

  it.each(cells)("%s", async (label, rules) => {
    const u = w.unit(op.kind, ++cellNo);
    const act = await op.prepare(u);
    const stats0 = w.emu.stats();
    const t0 = w.clock.now();
    for (const r of rules) w.emu.faults.add(r);

    const answer = await act().catch((e: unknown) => {
      if (e instanceof PaymentError) return e;
      throw e;
    });

    const timeMs = w.clock.now() - t0;
    const stats = w.emu.stats();
    w.emu.faults.clear();
    await u.driver.close();
    const requests = stats.requests - stats0.requests;
    const figures = `${requests}/${budget.requests} requests | ${timeMs}/${budget.timeMs} ms`;
    report.push(`${op.kind} ${op.id} | ${label} | ${figures} | ${outcome(answer)}`);

    expect(total(stats.faults) - total(stats0.faults), "the schedule was hit").toBeGreaterThan(0);
    expect(requests, "requests").toBeLessThanOrEqual(budget.requests);
    expect(timeMs, "time to a final answer, ms").toBeLessThanOrEqual(budget.timeMs);
    const kinds = w.ledger(u.orderId);
    for (const k of new Set(kinds)) expect(kinds.filter((x) => x === k).length, `${k} once`).toBe(1);
    expect(kinds.includes("captured") && kinds.includes("cancelled")).toBe(false);
  });
});
