import { expect, it } from "vitest";
import { transition } from "./machine.js";
import { rows } from "./machine.rows.test-support.js";
import { ctx, payingRef, S, up } from "./selection.test-support.js";
import { transitionTable } from "./table.test-support.js";

transitionTable("engine transitions (selection first): idle and paying", ctx, rows);

it("never approves an amount other than the session's price", () => {
  for (const amount of [1, 149, 151, 10_000, null]) {
    const { effects } = transition(payingRef(), up("reserved", { amount }), ctx);
    for (const e of effects) if (e.type === "approveVend") expect(e.amount).toBe(S.price);
  }
});
