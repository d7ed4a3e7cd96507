import { mkdirSync, readdirSync, renameSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ActorContext, customerPays, pause, selectionVend, waitUntil } from "../../src/chaos/actors.js";
import { readJournal, startWorld, Unit, type World } from "../../src/chaos/index.js";
import { vendd } from "../support/cli.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";
import { journalBytes } from "../support/journalBytes.js";

// Issue 10, defect 4: a WAL truncated after a crash. Today the daemon starts silently with an empty journal:
// the reserved payment stays reserved at the service forever and order ids start again. Now the start is
// refused as "data lost" (untouched, nothing sent), and README's "Recovering a unit" procedure works: move
// the journal aside, `vendd journal held --cancel` releases what the service still holds, a fresh start
// sells again with order ids that never repeat the lost ones.

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe.skipIf(!HAVE_SOCAT)("a journal whose WAL was truncated after a crash", () => {
  it("is refused as data lost; the recovery procedure releases the held payment; ids never repeat", {
    timeout: 120_000,
  }, async () => {
    requireBuiltCli();
    const w = await startWorld(50);
    world = w;
    const unit = Unit.create(w, { driver: "v10", flow: "selection" });
    const { journalPath, configPath, secretsPath, dir } = unit.files;
    const ctx: ActorContext = {
      emu: w.emu,
      sim: w.sim,
      beaconId: unit.files.beaconId,
      phone: "+4520031801",
      payWithinMs: 6000,
      decideWithinMs: 6000,
      random: () => 0.5,
    };
    await unit.start();
    expect((await selectionVend(ctx, 1, 150, 1)).outcome).toBe("success");
    const closed = () => readJournal(journalPath).sessions.filter((s) => s.closedAt !== null).length;
    expect(await waitUntil(() => closed() === 1, 10_000)).toBe(true);
    // The next customer's payment is reserved and the vend approved when the unit dies.
    w.sim.vend(2, 260);
    await customerPays(ctx, () => w.sim.reader !== "vend");
    expect(await waitUntil(() => w.sim.reader === "approved", 6000)).toBe(true);
    const lost = readJournal(journalPath).sessions.map((s) => s.orderId);
    expect(lost).toHaveLength(2);
    await unit.crash();
    truncateSync(`${journalPath}-wal`, 0);
    const before = journalBytes(journalPath);

    const requests = w.emu.stats().requests;
    const refused = unit.launch();
    await Promise.race([refused.whenExited(), waitUntil(() => refused.log.includes("next step"), 20_000)]);
    await pause(300);
    expect(refused.log).toContain(journalPath);
    expect(refused.log).toContain("cause:     data lost");
    expect(refused.log).toMatch(/next step: .*"Recovering a unit"/);
    expect(w.emu.stats().requests).toBe(requests);
    expect(journalBytes(journalPath)).toBe(before);
    await unit.crash();
    const reserved = unit.ledger().filter((e) => e.kind === "reserved" && e.amount === 260);
    expect(reserved).toHaveLength(1);

    // README, "Recovering a unit": move the journal and its sidecars aside, release what the service holds.
    const aside = join(dir, "aside");
    mkdirSync(aside);
    for (const f of readdirSync(dir).filter((f) => f.startsWith("journal.db")))
      renameSync(join(dir, f), join(aside, f));
    const listed = await vendd(["journal", "held", "--config", configPath, "--secrets", secretsPath]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${lost[1]}\\s+reserved\\s+2\\.60\\s+not in journal`));
    const cancelled = await vendd([
      "journal",
      "held",
      "--cancel",
      "--config",
      configPath,
      "--secrets",
      secretsPath,
      "--json",
    ]);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout).held).toEqual([
      expect.objectContaining({ orderId: lost[1], state: "reserved", journal: null, action: "cancelled" }),
    ]);
    expect(
      unit
        .ledger()
        .filter((e) => e.orderId === lost[1])
        .map((e) => e.kind),
    ).toEqual(["reserved", "cancelled"]);

    // A fresh journal: the unit sells again, and no order id repeats one of the lost journal.
    w.sim.dispenseFailure();
    await unit.start();
    expect((await selectionVend(ctx, 3, 370, 1)).outcome).toBe("success");
    const fresh = readJournal(journalPath).sessions.map((s) => s.orderId);
    expect(fresh).toHaveLength(1);
    expect(lost).not.toContain(fresh[0]);
    expect(fresh[0]).toMatch(/^chaos-1-\d{10}-1$/);
  });
});
