import { expect, it } from "vitest";
import { type CaseKit, caseIf, END, FUNDS, KEEP, refused } from "./kit.js";

/** Authorization first (BEGIN SESSION, vending-mdb §1.4), session end, and the display. */
export function sessionCases(t: CaseKit): void {
  it("authorization first: sessionStarted with the funds, a vend inside, the VMC ends the session", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    const r = await t.request(2, 150);
    await t.approve(r.price);
    await machine.dispense("success", END);
    await t.untilCount("sessionEnded");
    await t.s.settle();
    expect(t.ev.list).toEqual([
      { type: "sessionStarted", funds: FUNDS },
      { type: "vendRequested", ...r },
      { type: "vendSucceeded", item: r.item },
      { type: "sessionEnded" },
    ]);
    await refused(ctrl.endSession(), "state");
  });

  caseIf(
    t.caps,
    ["multiVend"],
    "multi-vend: two vends in one session, then the VMC completes it",
    async () => {
      const { ctrl, machine } = t.s;
      await ctrl.open();
      await ctrl.beginSession(FUNDS);
      await t.untilCount("sessionStarted");
      const a = await t.request(12, 150);
      await t.approve(a.price);
      await machine.dispense("success", KEEP);
      await t.untilCount("vendSucceeded");
      await t.s.until(() => machine.ready(), "the session takes a second selection");
      const b = await t.request(7, 200);
      await t.approve(b.price);
      await machine.dispense("success", KEEP);
      await t.untilCount("vendSucceeded", 2);
      await t.s.until(() => machine.ready(), "the session is idle again");
      await t.s.settle();
      expect(t.ev.has("sessionEnded")).toBe(false);
      await machine.completeSession();
      await t.untilCount("sessionEnded");
      expect(t.ev.types()).toEqual([
        "sessionStarted",
        "vendRequested",
        "vendSucceeded",
        "vendRequested",
        "vendSucceeded",
        "sessionEnded",
      ]);
      t.expectApprovals([a.price, b.price]);
    },
  );

  it("endSession ends an idle session vendd began; a second endSession is refused (state)", async () => {
    const { ctrl } = t.s;
    await ctrl.open();
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    await ctrl.endSession();
    await t.untilCount("sessionEnded");
    await refused(ctrl.endSession(), "state");
    await t.s.settle();
    expect(t.ev.types()).toEqual(["sessionStarted", "sessionEnded"]);
    await t.request(2, 150);
  });

  it("the VMC completes an idle session (return button): sessionEnded; endSession is then refused", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    await machine.completeSession();
    await t.untilCount("sessionEnded");
    await refused(ctrl.endSession(), "state");
    await t.s.settle();
    expect(t.ev.types()).toEqual(["sessionStarted", "sessionEnded"]);
  });

  it("beginSession refuses funds that are not minor units (amount) and a second session (state)", async () => {
    const { ctrl } = t.s;
    await ctrl.open();
    for (const funds of [-1, 1.5, Number.NaN, FUNDS + 0.5, Number.POSITIVE_INFINITY]) {
      await refused(ctrl.beginSession(funds), "amount");
    }
    await t.s.settle();
    expect(t.ev.list).toEqual([]);
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    await refused(ctrl.beginSession(FUNDS), "state");
    await t.s.settle();
    expect(t.ev.list).toEqual([{ type: "sessionStarted", funds: FUNDS }]);
  });

  it("deny inside a session keeps the session: no sessionEnded, a second vend follows", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    await t.request(2, 150);
    await ctrl.denyVend();
    await t.s.until(() => machine.ready(), "the session takes another selection");
    await t.s.settle();
    expect(t.ev.types()).toEqual(["sessionStarted", "vendRequested"]);
    const r = await t.request(7, 200);
    await t.approve(r.price);
    await machine.dispense("success", END);
    await t.untilCount("sessionEnded");
    expect(t.ev.types()).toEqual([
      "sessionStarted",
      "vendRequested",
      "vendRequested",
      "vendSucceeded",
      "sessionEnded",
    ]);
    t.expectApprovals([r.price]);
  });

  it("endSession with a vend request pending is refused (state) and the request stands", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    const r = await t.request(2, 150);
    await refused(ctrl.endSession(), "state");
    await t.approve(r.price);
    await refused(ctrl.endSession(), "state");
    await machine.dispense("success", END);
    await t.untilCount("sessionEnded");
    expect(t.ev.types()).toEqual(["sessionStarted", "vendRequested", "vendSucceeded", "sessionEnded"]);
  });

  caseIf(
    t.caps,
    ["withdrawKeepsSession"],
    "a request withdrawn inside a session (VEND CANCEL) keeps the session; endSession then ends it",
    async () => {
      const { ctrl, machine } = t.s;
      await ctrl.open();
      await ctrl.beginSession(FUNDS);
      await t.untilCount("sessionStarted");
      const r = await t.request(2, 150);
      await machine.withdrawRequest();
      await t.untilCount("vendCancelled");
      await t.s.until(() => machine.ready(), "the session is idle again");
      await t.s.settle();
      // vending-mdb §1.3: VEND CANCEL is answered with VEND DENIED and the reader is back in Session Idle.
      expect(t.ev.types()).toEqual(["sessionStarted", "vendRequested", "vendCancelled"]);
      await refused(ctrl.approveVend(r.price), "state");
      await ctrl.endSession();
      await t.untilCount("sessionEnded");
    },
  );

  caseIf(t.caps, ["display"], "displayText shows at most 32 printable ASCII characters", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await ctrl.displayText("Scan to pay: 12.50 kr ✓");
    await ctrl.beginSession(FUNDS);
    await t.untilCount("sessionStarted");
    await ctrl.displayText(`Choose a product${"!".repeat(30)}`);
    await t.s.settle();
    // vending-mdb §1.3 DISPLAY REQUEST: at most 32 ASCII characters.
    expect(machine.displays()).toEqual(["Scan to pay: 12.50 kr ?", `Choose a product${"!".repeat(16)}`]);
    expect(t.ev.types()).toEqual(["sessionStarted"]);
  });

  it("displayText resolves while open (best effort, also where there is no display)", async () => {
    await t.s.ctrl.open();
    await t.s.ctrl.displayText("Hello");
    await t.s.settle();
    expect(t.ev.list).toEqual([]);
  });
}
