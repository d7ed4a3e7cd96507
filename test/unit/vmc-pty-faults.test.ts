import { afterEach, describe, expect, it } from "vitest";
import { eventually, HAVE_SOCAT, type PtyRig, ptyRig } from "../support/vmc.js";

const CONFIG = ["C,0", "C,SETCONF,mdb-currency-code=0x1208", "C,SETCONF,mdb-always-idle=1", "C,1"];

// Fault scenarios of vending-mdb §2.5 over a real PTY; one fault per test.
describe.skipIf(!HAVE_SOCAT)("vmc adapter over a PTY: faults", () => {
  let rig: PtyRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
  });

  it("VMC reset mid-vend: reset event, reconfiguration, and a late success is not an event", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    sim.vend(2, 100);
    await log.waitType("vendRequested");
    await ctrl.approveVend(100);
    const before = sim.commands.length;
    sim.vmcReset();
    const reset = await log.waitType("reset");
    expect(reset).toMatchObject({ type: "reset" });
    await sim.waitForCommand(/^C,1$/, 3000, before);
    expect(sim.commands.slice(before)).toEqual(CONFIG);
    await eventually(() => ctrl.readerState === "enabled", 3000, "enabled again");
    sim.garbage("c,VEND,SUCCESS");
    sim.vend(3, 250);
    await log.wait((e) => e.type === "vendRequested" && e.item === 3);
    expect(log.types()).toEqual(["vendRequested", "reset", "vendRequested"]);
    expect(rig.logs.some((l) => l.msg.includes("out of sequence: vendSuccess"))).toBe(true);
  });

  it("adapter power-cycle: configuration is lost and sent again, selection first works after", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    sim.adapterPowerCycle();
    expect(sim.config.size).toBe(0);
    await log.waitType("reset");
    await eventually(() => sim.config.get("mdb-always-idle") === "1", 3000, "reconfigured");
    await eventually(() => ctrl.readerState === "enabled", 3000, "enabled again");
    expect(sim.commands.filter((c) => c.startsWith("C,SETCONF"))).toHaveLength(4);
    sim.vend(5, 200);
    await log.waitType("vendRequested");
    await ctrl.approveVend(200);
    expect(sim.approvals).toMatchObject([{ item: 5, price: 200, amount: 200 }]);
  });

  it("garbage lines are logged and dropped; the session goes on", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    for (const g of [
      "\u0001\u00ff\u0002",
      "c,STATUS,VEND,abc,2",
      "c,STATUS,VEND,1.005,2",
      "zz",
      "c,VEND,SUCCESS",
      ",",
    ]) {
      sim.garbage(g);
    }
    sim.vend(2, 100);
    await log.waitType("vendRequested");
    await ctrl.approveVend(100);
    sim.dispenseSuccess();
    await log.waitType("sessionEnded");
    expect(log.types()).toEqual(["vendRequested", "vendSucceeded", "sessionEnded"]);
    const dropped = rig.logs.filter(
      (l) => l.msg.startsWith("invalid line dropped") || l.msg.startsWith("out of sequence"),
    );
    expect(dropped.length).toBeGreaterThanOrEqual(6);
  });

  it("over-long lines are discarded and logged, never parsed", async () => {
    rig = await ptyRig();
    const { sim, log } = rig;
    sim.overlongLine(5000);
    sim.overlongLine(300);
    sim.vend(2, 100);
    await log.waitType("vendRequested");
    expect(log.types()).toEqual(["vendRequested"]);
    // One warning per chunk read, with the number of lines it discarded: the two lines may come in one read.
    const discarded = rig.logs
      .filter((l) => l.msg === "over-long line discarded")
      .reduce((n, l) => n + (typeof l.fields.count === "number" ? l.fields.count : 0), 0);
    expect(discarded).toBe(2);
  });

  it("r,ACK silence: link down after linkTimeoutMs, up when polls resume", async () => {
    rig = await ptyRig({ ackRate: 100, linkTimeoutMs: 150 });
    const { sim, log } = rig;
    await log.wait((e) => e.type === "link" && e.up);
    const from = log.events.length;
    sim.setAckRate(0);
    await log.wait((e) => e.type === "link" && !e.up, 2000, from);
    sim.setAckRate(100);
    await log.wait((e) => e.type === "link" && e.up, 2000, from);
    expect(rig.ctrl.linkUp).toBe(true);
  });

  it("unplug and replug: link down, commands fail with io, reopen with backoff, reconfigure", async () => {
    rig = await ptyRig();
    const { sim, ctrl, log } = rig;
    sim.vend(2, 100);
    await log.waitType("vendRequested");
    await ctrl.approveVend(100);
    await sim.unplug();
    await log.wait((e) => e.type === "link" && !e.up);
    await log.waitType("reset");
    const err = await ctrl.beginSession(100).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "io" });
    const before = sim.commands.length;
    await sim.replug();
    await sim.waitForCommand(/^C,1$/, 5000, before);
    await eventually(() => ctrl.readerState === "enabled", 3000, "enabled after replug");
    expect(sim.commands.slice(before)).toEqual(CONFIG);
    await log.wait(
      (e) => e.type === "link" && e.up,
      2000,
      log.events.findIndex((e) => e.type === "reset"),
    );
    sim.vend(4, 300);
    await log.wait((e) => e.type === "vendRequested" && e.item === 4);
    await ctrl.approveVend(300);
    expect(rig.logs.some((l) => l.msg === "serial link lost")).toBe(true);
  });
});
