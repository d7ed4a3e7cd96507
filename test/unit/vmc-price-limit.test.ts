/**
 * engine.maxPrice end to end (issue 10, defect 3): the built daemon drives the VMC simulator's adapter line
 * protocol on a real PTY against the payment-service emulator. In the selection flow the price comes from
 * the machine, so a line such as `c,STATUS,VEND,99999999999,1` must be denied at the VMC without any request
 * to the service.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { waitUntil } from "../../src/chaos/actors.js";
import { readJournal } from "../../src/chaos/journalView.js";
import { Unit, type World } from "../../src/chaos/rig.js";
import { formatAmount } from "../../src/core/money.js";
import { startEmulator } from "../../src/emulator/index.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

/** POST /v10/payments requests the emulator received: each one starts a payment. */
const paymentStarts = (world: World) => world.emu.stats().byRoute["POST /v10/payments"] ?? 0;

describe.skipIf(!HAVE_SOCAT)(
  "engine.maxPrice over the adapter line protocol (vendd run, PTY, emulator)",
  () => {
    let world: World;
    let unit: Unit;

    beforeAll(async () => {
      requireBuiltCli();
      // A machine whose MDB prices have no decimals (Y = 0): its adapter writes `99999999999`, not
      // `99999999999.00`, and `5` for 5.00; the simulator's own state follows each vend it sends.
      const emu = await startEmulator({ pollDelayMs: 50 });
      const sim = await startVmcSimulator({ ackRate: 100, decimals: 0 });
      const units: Unit[] = [];
      world = {
        emu,
        sim,
        units,
        async close() {
          for (const u of units) await u.dispose();
          await sim.close();
          await emu.close();
        },
      };
      unit = Unit.create(world, { driver: "v10", flow: "selection" });
      const config = JSON.parse(readFileSync(unit.files.configPath, "utf8"));
      config.vmc.decimals = 0;
      writeFileSync(unit.files.configPath, JSON.stringify(config));
      await unit.start();
    }, 60_000);
    afterAll(async () => {
      await world?.close();
    });

    it("denies c,STATUS,VEND,99999999999,1 at the VMC, logs it at warn level, and never contacts the service", async () => {
      const before = paymentStarts(world);
      const denies = world.sim.commands.filter((c) => c === "C,VEND,-1").length;
      // The simulator writes `c,STATUS,VEND,${formatAmount(price, 0)},1`: exactly the line of the defect.
      expect(`c,STATUS,VEND,${formatAmount(99_999_999_999, 0)},1`).toBe("c,STATUS,VEND,99999999999,1");
      world.sim.vend(1, 99_999_999_999);
      const denied = await waitUntil(
        () => world.sim.commands.filter((c) => c === "C,VEND,-1").length > denies,
        10_000,
      );
      expect(denied, unit.daemon?.tail()).toBe(true);
      const warn = await waitUntil(() => (unit.daemon?.log ?? "").includes('"msg":"vend denied"'), 5000);
      expect(warn).toBe(true);
      const line =
        (unit.daemon?.log ?? "").split("\n").find((l) => l.includes('"msg":"vend denied"')) ?? "{}";
      expect(JSON.parse(line)).toMatchObject({
        level: 40,
        item: 1,
        price: 9_999_999_999_900,
        reason: "price 9999999999900 above engine.maxPrice 50000 (minor units)",
      });
      const session = readJournal(unit.files.journalPath).sessions.find((s) => s.item === 1);
      expect(session).toMatchObject({ price: 9_999_999_999_900, result: "denied", paymentId: null });
      expect(readJournal(unit.files.journalPath).intents).toEqual([]);
      expect(paymentStarts(world)).toBe(before);
      expect(unit.ledger()).toEqual([]);
      expect(world.sim.approvals.slice(unit.approvalMark)).toEqual([]);
    }, 30_000);

    it("reads a price of the adapter line in currency units whatever vmc.decimals says", async () => {
      const before = paymentStarts(world);
      world.sim.vend(2, 5);
      const started = await waitUntil(() => readJournal(unit.files.journalPath).intents.length > 0, 10_000);
      expect(started, unit.daemon?.tail()).toBe(true);
      const journal = readJournal(unit.files.journalPath);
      expect(journal.sessions.find((s) => s.item === 2)?.price).toBe(500);
      expect(journal.intents[0]?.amount).toBe(500);
      // The intent is durable before the request leaves (that is the rule), so the start may still be on
      // its way to the emulator when the journal shows it.
      expect(await waitUntil(() => paymentStarts(world) === before + 1, 5000)).toBe(true);
    }, 30_000);
  },
);
