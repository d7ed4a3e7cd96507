import { expect, it } from "vitest";
import { ctx, find, inSession, vend } from "./checkin.test-support.js";
import { transition } from "./machine.js";
import { rows } from "./session-vend.rows.test-support.js";
import { transitionTable } from "./table.test-support.js";

transitionTable("engine transitions (check-in first): vends in a session and settling", ctx, rows);

it("never approves more than the funds left, whatever the prices", () => {
  for (const vended of [0, 500, 1999]) {
    for (const price of [1, 500, 1500, 2000, 2001]) {
      const { effects } = transition(inSession({ vended }), vend(price), ctx);
      const approve = find(effects, "approveVend");
      if (approve) expect(approve.amount).toBeLessThanOrEqual(2000 - vended);
    }
  }
});
