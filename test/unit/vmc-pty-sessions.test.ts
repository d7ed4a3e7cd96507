import { afterEach, describe, expect, it } from "vitest";
import { VmcError } from "../../drivers/vmc/controller.js";
import { eventually, HAVE_SOCAT, type PtyRig, ptyRig } from "../support/vmc.js";

// Every example session of vending-mdb §2.4 over a real PTY (socat) and serialport's real binding.
describe.skipIf(!HAVE_SOCAT)("vmc adapter over a PTY: §2.4 example sessions", () => {
  let rig: PtyRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
  });

  it("start-up: C,0, SETCONF currency and always-idle, C,1, then the VMC enables the reader", async () => {
    rig = await ptyRig();
    expect(rig.sim.commands).toEqual([
      "C,0",
      "C,SETCONF,mdb-currency-code=0x1208",
      "C,SETCONF,mdb-always-idle=1",
      "C,1",
    ]);
    expect(rig.sim.config.get("mdb-currency-code")).toBe("0x1208");
    expect(rig.ctrl.readerState).toBe("enabled");
    await rig.log.wait((e) => e.type === "link" && e.up);
  });

  it("selection first: approve exactly the requested amount, success, session ends", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    sim.vend(2, 100);
    expect(await log.waitType("vendRequested")).toEqual({ type: "vendRequested", item: 2, price: 100 });
    await ctrl.approveVend(100);
    expect(sim.commands.at(-1)).toBe("C,VEND,1.00");
    sim.dispenseSuccess();
    await log.waitType("sessionEnded");
    expect(log.types()).toEqual(["vendRequested", "vendSucceeded", "sessionEnded"]);
    expect(log.events.find((e) => e.type === "vendSucceeded")).toEqual({ type: "vendSucceeded", item: 2 });
    expect(sim.approvals).toMatchObject([{ item: 2, price: 100, amount: 100 }]);
    expect(sim.violations).toEqual([]);
  });

  it("never approves an amount other than the requested one (15.19 is not 15)", async () => {
    rig = await ptyRig();
    rig.sim.vend(17, 1519);
    await rig.log.waitType("vendRequested");
    const err = await rig.ctrl.approveVend(1500).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VmcError);
    expect((err as VmcError).code).toBe("amount");
    expect(rig.sim.commands.some((c) => c.startsWith("C,VEND,1"))).toBe(false);
    await rig.ctrl.approveVend(1519);
    expect(rig.sim.approvals).toMatchObject([{ item: 17, price: 1519, amount: 1519 }]);
  });

  it("authorization first: C,START, IDLE with funds, vend inside the session", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    await ctrl.beginSession(500);
    expect(sim.commands.at(-1)).toBe("C,START,5.00");
    expect(await log.waitType("sessionStarted")).toEqual({ type: "sessionStarted", funds: 500 });
    sim.vend(12, 150);
    await log.waitType("vendRequested");
    await ctrl.approveVend(150);
    sim.dispenseSuccess();
    await log.waitType("sessionEnded");
    expect(log.types()).toEqual(["sessionStarted", "vendRequested", "vendSucceeded", "sessionEnded"]);
  });

  it("multi-vend: two approved vends in one session", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    await ctrl.beginSession(500);
    sim.vend(12, 150);
    await log.waitType("vendRequested");
    await ctrl.approveVend(150);
    sim.dispenseSuccess({ endSession: false });
    await log.waitType("vendSucceeded");
    await eventually(() => ctrl.readerState === "idle", 2000, "session idle");
    sim.vend(7, 200);
    await log.wait((e) => e.type === "vendRequested" && e.item === 7);
    await ctrl.approveVend(200);
    sim.dispenseSuccess({ endSession: false });
    await eventually(() => ctrl.readerState === "idle", 2000, "session idle again");
    sim.completeSession();
    await log.waitType("sessionEnded");
    expect(log.types()).toEqual([
      "sessionStarted",
      "vendRequested",
      "vendSucceeded",
      "vendRequested",
      "vendSucceeded",
      "sessionEnded",
    ]);
    expect(sim.approvals.map((a) => a.amount)).toEqual([150, 200]);
  });

  it("deny: C,VEND,-1, then IDLE and ENABLED", async () => {
    rig = await ptyRig();
    rig.sim.vend(2, 100);
    await rig.log.waitType("vendRequested");
    await rig.ctrl.denyVend();
    expect(rig.sim.commands.at(-1)).toBe("C,VEND,-1");
    await rig.log.waitType("sessionEnded");
    expect(rig.log.types()).toEqual(["vendRequested", "sessionEnded"]);
    expect(rig.sim.approvals).toEqual([]);
  });

  it("dispense failure: c,ERR,VEND 3 becomes vendFailed", async () => {
    rig = await ptyRig();
    rig.sim.vend(2, 100);
    await rig.log.waitType("vendRequested");
    await rig.ctrl.approveVend(100);
    rig.sim.dispenseFailure();
    await rig.log.waitType("sessionEnded");
    expect(rig.log.types()).toEqual(["vendRequested", "vendFailed", "sessionEnded"]);
  });

  it("return button in an authorization-first session: SESSION COMPLETE, nothing vended", async () => {
    rig = await ptyRig();
    await rig.ctrl.beginSession(500);
    await rig.log.waitType("sessionStarted");
    rig.sim.customerCancel();
    await rig.log.waitType("sessionEnded");
    expect(rig.log.types()).toEqual(["sessionStarted", "sessionEnded"]);
  });

  it("return button during a selection-first vend request: VEND 1 becomes vendCancelled", async () => {
    rig = await ptyRig();
    rig.sim.vend(2, 100);
    await rig.log.waitType("vendRequested");
    rig.sim.customerCancel();
    await rig.log.waitType("sessionEnded");
    expect(rig.log.types()).toEqual(["vendRequested", "vendCancelled", "sessionEnded"]);
    const late = await rig.ctrl.approveVend(100).catch((e: unknown) => e);
    expect((late as VmcError).code).toBe("state");
    expect(rig.sim.approvals).toEqual([]);
  });

  it("takes the reader off the bus and back (C,0, then the full configuration again)", async () => {
    rig = await ptyRig();
    await rig.ctrl.setEnabled(false);
    expect(rig.sim.commands.at(-1)).toBe("C,0");
    expect(rig.sim.reader).toBe("off");
    const refused = await rig.ctrl.beginSession(100).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "state" });
    await rig.ctrl.setEnabled(true);
    expect(rig.sim.commands.slice(-4)).toEqual([
      "C,0",
      "C,SETCONF,mdb-currency-code=0x1208",
      "C,SETCONF,mdb-always-idle=1",
      "C,1",
    ]);
    await eventually(() => rig?.ctrl.readerState === "enabled", 2000, "enabled");
  });

  it("ends a session vendd began (C,STOP) and shows text (C,DISPLAY)", async () => {
    rig = await ptyRig();
    await rig.ctrl.displayText("Scan to pay: 12.50 kr ✓");
    expect(rig.sim.displays).toEqual(["Scan to pay: 12.50 kr ?"]);
    await rig.ctrl.beginSession(300);
    await rig.ctrl.endSession();
    expect(rig.sim.commands.slice(-2)).toEqual(["C,START,3.00", "C,STOP"]);
    await rig.log.waitType("sessionEnded");
  });
});
