import { expect } from "vitest";
import { type CaseKit, caseIf, FUNDS, refused } from "./kit.js";

/** The failure semantics of controller.ts: commands without confirmation, and a link that goes away. */
export function faultCases(t: CaseKit): void {
  caseIf(
    t.caps,
    ["silence"],
    "a command the machine does not confirm rejects with timeout after the command timeout, changing nothing",
    async () => {
      const { ctrl, machine } = t.s;
      await ctrl.open();
      machine.silence(true);
      let outcome: unknown = "pending";
      const startedAt = Date.now();
      const begin = ctrl.beginSession(FUNDS).then(
        () => null,
        (e: unknown) => e,
      );
      void begin.then((o) => {
        outcome = o;
      });
      const timeout = t.s.commandTimeoutMs;
      if (t.s.injectedClock) {
        await t.s.settle(); // the command is written (its timer armed) before the clock moves

        await t.s.elapse(timeout - 1);
        expect(outcome).toBe("pending");
        await t.s.elapse(1);
      }
      const err = await begin;
      expect(err).toMatchObject({ name: "VmcError", code: "timeout" });
      if (!t.s.injectedClock) expect(Date.now() - startedAt).toBeGreaterThanOrEqual(timeout - 5);
      machine.silence(false);
      await t.s.settle();
      expect(t.ev.list).toEqual([]);
      await ctrl.beginSession(FUNDS);
      await t.untilCount("sessionStarted");
      expect(t.ev.list).toEqual([{ type: "sessionStarted", funds: FUNDS }]);
    },
  );

  caseIf(
    t.caps,
    ["unplug"],
    "unplug during an approved vend: link down and reset (unknown outcome), commands fail with io; replug serves",
    async () => {
      const { ctrl, machine } = t.s;
      await ctrl.open();
      const r = await t.request(2, 150);
      await t.approve(r.price);
      await machine.unplug();
      await t.s.until(
        () => t.ev.has("reset") && t.ev.all.some((e) => e.type === "link" && !e.up),
        "reset and link down after the unplug",
      );
      await refused(ctrl.beginSession(FUNDS), "io");
      await machine.replug();
      await t.request(7, 200);
      await t.s.settle();
      expect(t.ev.list).toEqual([
        { type: "vendRequested", ...r },
        { type: "reset", reason: expect.any(String) },
        { type: "vendRequested", item: expect.any(Number), price: expect.any(Number) },
      ]);
    },
  );
}
