import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startVmcSimulator, type VmcSimulator } from "../../drivers/vmc/simulator/index.js";
import {
  type ActorContext,
  customerPays,
  pause,
  selectionVend,
  type VendRecord,
  waitUntil,
} from "../../src/chaos/actors.js";
import { DaemonProcess } from "../../src/chaos/daemonProcess.js";
import { startWorld, Unit, type World } from "../../src/chaos/index.js";
import { expectQuietAndConsistent, HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";
import { journalBytes } from "../support/journalBytes.js";

// Issue 10, defect 1: two `vendd run` on one journal. The second must be refused before it does anything
// (no request to the service, no journal write), whether it names the same serial device or another one;
// the first keeps selling; a SIGKILLed holder is replaced at once (the kernel releases the lock).

let world: World | undefined;
let sim2: VmcSimulator | undefined;
let second: DaemonProcess | undefined;
afterEach(async () => {
  await second?.crash();
  second = undefined;
  await sim2?.close();
  sim2 = undefined;
  await world?.close();
  world = undefined;
});

/** Brings the unit to the dangerous moment: a vend approved at the VMC, its outcome not known yet. */
async function vendInFlight(w: World, unit: Unit): Promise<void> {
  const ctx: ActorContext = {
    emu: w.emu,
    sim: w.sim,
    beaconId: unit.files.beaconId,
    phone: "+4520031801",
    payWithinMs: 6000,
    decideWithinMs: 6000,
    random: () => 0.5,
  };
  expect(await waitUntil(() => w.sim.reader === "enabled", 5000)).toBe(true);
  w.sim.vend(2, 250);
  await customerPays(ctx, () => w.sim.reader !== "vend");
  expect(await waitUntil(() => w.sim.reader === "approved", 6000)).toBe(true);
}

/** Starts a second daemon with `configPath` while the first holds the journal; returns how it ended. */
async function secondDaemon(unit: Unit, configPath: string) {
  const w = unit.world;
  const holder = unit.daemon?.pid;
  // The first daemon is quiet while the VMC dispenses: nothing it does can be mistaken for the second's.
  await pause(300);
  const requests = w.emu.stats().requests;
  const bytes = journalBytes(unit.files.journalPath);
  second = DaemonProcess.spawn({ configPath, secretsPath: unit.files.secretsPath });
  const exit = await Promise.race([second.whenExited(), pause(20_000).then(() => null)]);
  return { holder, exit, log: second.log, requests: w.emu.stats().requests - requests, bytes, unit };
}

async function expectRefusedThenFirstKeepsSelling(r: Awaited<ReturnType<typeof secondDaemon>>) {
  const { unit } = r;
  const w = unit.world;
  expect(r.exit, `the second daemon did not exit:\n${r.log}`).toEqual({ code: 1, signal: null });
  expect(r.log).toContain(
    `vendd run: journal ${unit.files.journalPath} is in use by vendd (PID ${r.holder}, since `,
  );
  expect(r.requests).toBe(0);
  expect(journalBytes(unit.files.journalPath)).toBe(r.bytes);
  // The first daemon finishes the vend in flight and sells another one.
  w.sim.dispenseSuccess();
  const captured = () => unit.ledger().filter((e) => e.kind === "captured").length;
  expect(await waitUntil(() => captured() === 1, 10_000)).toBe(true);
  // The VMC's record of the vend in flight names its request (the last one the VMC made), as the rig's does.
  const records: VendRecord[] = [{ request: w.sim.requests, item: 2, price: 250, outcome: "success" }];
  const ctx: ActorContext = {
    emu: w.emu,
    sim: w.sim,
    beaconId: unit.files.beaconId,
    phone: "+4520031801",
    payWithinMs: 6000,
    decideWithinMs: 6000,
    random: () => 0.5,
  };
  records.push(await selectionVend(ctx, 3, 310, 1));
  expect(records[1]?.outcome).toBe("success");
  await expectQuietAndConsistent(unit, records);
  expect(
    unit
      .ledger()
      .filter((e) => e.kind === "captured")
      .map((e) => e.amount),
  ).toEqual([250, 310]);
  // A holder killed by SIGKILL leaves its lock file and owner record behind: an immediate restart works.
  await unit.crash();
  await unit.start({ readyTimeoutMs: 20_000 });
  await expectQuietAndConsistent(unit, records);
}

describe.skipIf(!HAVE_SOCAT)("two daemons on one journal", () => {
  it("the second, on the same serial device, is refused before any request or journal write", {
    timeout: 90_000,
  }, async () => {
    requireBuiltCli();
    world = await startWorld(50);
    const unit = Unit.create(world, { driver: "v10", flow: "selection" });
    await unit.start();
    await vendInFlight(world, unit);
    await expectRefusedThenFirstKeepsSelling(await secondDaemon(unit, unit.files.configPath));
  });

  it("the second, on another serial device, is refused the same way", { timeout: 90_000 }, async () => {
    requireBuiltCli();
    world = await startWorld(50);
    const unit = Unit.create(world, { driver: "legacy", flow: "selection" });
    await unit.start();
    sim2 = await startVmcSimulator({ ackRate: 100 });
    const config = JSON.parse(readFileSync(unit.files.configPath, "utf8")) as { vmc: { device: string } };
    config.vmc.device = sim2.devicePath;
    const other = join(unit.files.dir, "other.json");
    writeFileSync(other, JSON.stringify(config), { mode: 0o600 });
    await vendInFlight(world, unit);
    await expectRefusedThenFirstKeepsSelling(await secondDaemon(unit, other));
  });
});
