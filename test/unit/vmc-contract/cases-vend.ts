import { expect, it } from "vitest";
import { type CaseKit, caseIf, END, refused } from "./kit.js";

/** Selection first (MDB "always idle", vending-mdb §1.4 and the §2.4 example sessions). */
export function vendCases(t: CaseKit): void {
  it("selection first: request, approve exactly the price, success; the next customer is served", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    await t.approve(r.price);
    await machine.dispense("success", END);
    await t.untilCount("vendSucceeded");
    if (t.implicitEnd.length > 0) await t.untilCount("sessionEnded");
    await t.s.settle();
    expect(t.ev.list).toEqual([
      { type: "vendRequested", ...r },
      { type: "vendSucceeded", item: r.item },
      ...t.implicitEnd,
    ]);
    t.expectApprovals([r.price]);
    await t.request(7, 200);
  });

  caseIf(t.caps, ["dispenseFailure"], "a dispense failure becomes vendFailed", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    await t.approve(r.price);
    await machine.dispense("failure", END);
    await t.untilCount("vendFailed");
    if (t.implicitEnd.length > 0) await t.untilCount("sessionEnded");
    await t.s.settle();
    expect(t.ev.list).toEqual([{ type: "vendRequested", ...r }, { type: "vendFailed" }, ...t.implicitEnd]);
    t.expectApprovals([r.price]);
  });

  it("deny: nothing is vended, a late approval is refused, the next customer is served", async () => {
    const { ctrl } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    await ctrl.denyVend();
    if (t.implicitEnd.length > 0) await t.untilCount("sessionEnded");
    await t.s.settle();
    expect(t.ev.list).toEqual([{ type: "vendRequested", ...r }, ...t.implicitEnd]);
    await refused(ctrl.approveVend(r.price), "state");
    t.expectApprovals([]);
    await t.request(7, 200);
  });

  it("an approval of any other amount is refused (amount) and reaches no machine; the exact one does", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    // vending-mdb §2.5: a request of 15.19 approved with 15 lost 0.19 per sale in a public project.
    const r = await t.request(17, 1519);
    for (const amount of [r.price - 19, r.price - 1, r.price + 1, 0, -r.price, r.price + 0.5, Number.NaN]) {
      await refused(ctrl.approveVend(amount), "amount");
    }
    await t.s.settle();
    t.expectApprovals([]);
    await t.approve(r.price);
    t.expectApprovals([r.price]);
    await machine.dispense("success", END);
    await t.untilCount("vendSucceeded");
    expect(t.ev.count("vendRequested")).toBe(1);
  });

  it("approve and deny without a pending request are refused (state); approving twice is refused", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await refused(ctrl.approveVend(150), "state");
    await refused(ctrl.denyVend(), "state");
    const r = await t.request(2, 150);
    await t.approve(r.price);
    await refused(ctrl.approveVend(r.price), "state");
    await refused(ctrl.denyVend(), "state");
    await machine.dispense("success", END);
    await t.untilCount("vendSucceeded");
    await t.s.settle();
    expect(t.ev.types()).toEqual(["vendRequested", "vendSucceeded", ...t.implicitEnd.map((e) => e.type)]);
    t.expectApprovals([r.price]);
  });

  it("the machine withdraws a request before approval: vendCancelled, a late approval is refused", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    await machine.withdrawRequest();
    await t.untilCount("vendCancelled");
    if (t.implicitEnd.length > 0) await t.untilCount("sessionEnded");
    await t.s.settle();
    expect(t.ev.list).toEqual([{ type: "vendRequested", ...r }, { type: "vendCancelled" }, ...t.implicitEnd]);
    await refused(ctrl.approveVend(r.price), "state");
    t.expectApprovals([]);
  });

  caseIf(
    t.caps,
    ["vmcReset"],
    "a VMC reset during an approved vend: reset (unknown outcome), no outcome event, served again",
    async () => {
      const { ctrl, machine } = t.s;
      await ctrl.open();
      const r = await t.request(2, 150);
      await t.approve(r.price);
      await machine.reset();
      await t.untilCount("reset");
      await t.s.until(() => machine.ready(), "the machine takes selections again");
      await t.request(7, 200);
      await t.s.settle();
      // controller.ts: after `reset` the approved vend's outcome is unknown; the engine applies its policy.
      expect(t.ev.list).toEqual([
        { type: "vendRequested", ...r },
        { type: "reset", reason: expect.any(String) },
        { type: "vendRequested", item: expect.any(Number), price: expect.any(Number) },
      ]);
    },
  );

  caseIf(t.caps, ["strayOutcome"], "an outcome for a vend nobody approved is never an event", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await machine.strayOutcome();
    const r = await t.request(2, 150);
    await machine.strayOutcome();
    await t.s.settle();
    expect(t.ev.list).toEqual([{ type: "vendRequested", ...r }]);
    await t.approve(r.price);
    await machine.dispense("success", END);
    await t.untilCount("vendSucceeded");
    expect(t.ev.count("vendSucceeded")).toBe(1);
  });
}
