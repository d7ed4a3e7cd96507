/**
 * The `VendController` contract suite (issue 11): one set of cases, run against every implementation, in the
 * style of node-serialport's binding contract tests (one suite, many subjects). The contract is the doc
 * comment of drivers/vmc/controller.ts; the protocol facts are /work/shared/reference/vending-mdb.md.
 *
 * Subjects (one test file each, so they run in parallel workers):
 * - `sim.test.ts`: the in-process sim (drivers/vmc/sim.ts), driven through its own machine API;
 * - `mock-binding.test.ts`: the adapter driver over serialport's mock binding, the machine writing the
 *   adapter lines of vending-mdb §2.4 into the mock port (transcript.ts), on a ManualClock;
 * - `pty.test.ts`: the adapter driver over a real PTY (socat, one per suite) with the VMC simulator's core
 *   (drivers/vmc/simulator/core.ts) on the other end;
 * - `pulse.test.ts`: the pulse controller on the sim GPIO (start button, inhibit line, the clock);
 * - `real-adapter.test.ts`: the adapter driver on a real adapter when `VENDD_VMC_DEVICE` names one (see
 *   that file for what a real run needs); skipped, with the reason printed, otherwise.
 *
 * Every case asserts exact event sequences, so the two VMC models (the in-process sim and the simulator
 * core behind the PTY) are checked against each other: a case that passes for one and fails for the other
 * is a disagreement, settled by the reference. A case a subject cannot express is skipped with the reason
 * in its name (see `Capabilities`).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { faultCases } from "./cases-faults.js";
import { sessionCases } from "./cases-session.js";
import { vendCases } from "./cases-vend.js";
import { CaseKit, FUNDS, refused } from "./kit.js";
import type { SubjectDef, SubjectFactory } from "./subject.js";

export function describeVendController(def: SubjectDef): void {
  if (def.skip !== undefined) {
    process.stderr.write(`VendController contract on ${def.name} skipped: ${def.skip}\n`);
    describe.skip(`VendController contract: ${def.name} [skipped: ${def.skip}]`, () => {
      it("needs its subject", () => undefined);
    });
    return;
  }
  const options = def.timeoutMs === undefined ? {} : { timeout: def.timeoutMs };
  describe(`VendController contract: ${def.name}`, options, () => {
    const t = new CaseKit(def.caps);
    let factory: SubjectFactory | null = null;
    beforeAll(async () => {
      factory = await def.setup();
    });
    afterAll(async () => {
      await factory?.dispose();
    });
    beforeEach(async () => {
      if (!factory) throw new Error("subject factory not set up");
      t.start(await factory.make());
    });
    afterEach(async () => {
      const s = t.stop();
      if (!s) return;
      const violations = s.machine.violations();
      await s.teardown();
      // The controller never sent the machine a command outside the protocol.
      expect(violations).toEqual([]);
    });

    lifecycleCases(t);
    enableCases(t);
    vendCases(t);
    sessionCases(t);
    faultCases(t);
  });
}

function lifecycleCases(t: CaseKit): void {
  it("emits nothing before open; after open the machine is served", async () => {
    await t.s.machine.requestVend(2, 150);
    await t.s.quiet();
    expect(t.ev.all).toEqual([]);
    await t.s.ctrl.open();
    await t.request(2, 150);
  });

  it("open twice and close twice resolve; the second open leaves the controller serving", async () => {
    await t.s.ctrl.open();
    await t.s.ctrl.open();
    await t.s.settle();
    expect(t.ev.list).toEqual([]);
    await t.request(2, 150);
    await t.s.ctrl.close();
    await t.s.ctrl.close();
  });

  it("open on a disabled controller enables it again (open links, configures and enables)", async () => {
    await t.s.ctrl.open();
    await t.s.ctrl.setEnabled(false);
    await t.s.ctrl.open();
    await t.request(2, 150);
    expect(t.ev.types()).toEqual(["vendRequested"]);
  });

  it("commands before open reject with a VmcError and change nothing", async () => {
    const { ctrl } = t.s;
    await refused(ctrl.setEnabled(true));
    await refused(ctrl.beginSession(FUNDS));
    await refused(ctrl.approveVend(150));
    await refused(ctrl.denyVend());
    await refused(ctrl.endSession());
    await ctrl.open();
    await t.request(2, 150);
    expect(t.ev.types()).toEqual(["vendRequested"]);
  });

  it("after close: no event arrives, and open and every command reject with VmcError closed", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    await ctrl.close();
    const seen = t.ev.all.length;
    await machine.withdrawRequest().catch(() => undefined);
    await machine.requestVend(7, 200);
    await t.s.quiet();
    expect(t.ev.all).toHaveLength(seen);
    await refused(ctrl.open(), "closed");
    await refused(ctrl.setEnabled(true), "closed");
    await refused(ctrl.setEnabled(false), "closed");
    await refused(ctrl.beginSession(FUNDS), "closed");
    await refused(ctrl.approveVend(r.price), "closed");
    await refused(ctrl.denyVend(), "closed");
    await refused(ctrl.endSession(), "closed");
    await refused(ctrl.displayText("closed"), "closed");
    expect(t.ev.all).toHaveLength(seen);
  });
}

function enableCases(t: CaseKit): void {
  it("disabled: no vend request gets through, beginSession is refused; enabled again it serves", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    await ctrl.setEnabled(false);
    await ctrl.setEnabled(false);
    await machine.requestVend(2, 150);
    await t.s.settle();
    expect(t.ev.list).toEqual([]);
    await refused(ctrl.beginSession(FUNDS), "state");
    await ctrl.setEnabled(true);
    await ctrl.setEnabled(true);
    await t.request(7, 200);
    expect(t.ev.types()).toEqual(["vendRequested"]);
  });

  it("disabling with a request pending is refused (the request stands) or withdraws it (vendCancelled)", async () => {
    const { ctrl } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    const outcome = await ctrl.setEnabled(false).then(
      () => null,
      (e: unknown) => e,
    );
    await t.s.settle();
    if (outcome === null) {
      expect(t.ev.types()).toEqual(["vendRequested", "vendCancelled"]);
      await refused(ctrl.approveVend(r.price), "state");
    } else {
      expect(outcome).toMatchObject({ name: "VmcError", code: "state" });
      expect(t.ev.types()).toEqual(["vendRequested"]);
      await t.approve(r.price);
      t.expectApprovals([r.price]);
    }
  });

  it("disabling during an approved vend is refused and the vend's outcome still arrives", async () => {
    const { ctrl, machine } = t.s;
    await ctrl.open();
    const r = await t.request(2, 150);
    await t.approve(r.price);
    await refused(ctrl.setEnabled(false), "state");
    await machine.dispense("success", { endSession: true });
    await t.untilCount("vendSucceeded");
    await t.s.settle();
    expect(t.ev.list).toEqual([
      { type: "vendRequested", ...r },
      { type: "vendSucceeded", item: r.item },
      ...t.implicitEnd,
    ]);
  });
}
