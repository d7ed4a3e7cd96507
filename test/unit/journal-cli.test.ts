import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActorContext,
  customerPays,
  selectionVend,
  type VendRecord,
  waitUntil,
} from "../../src/chaos/actors.js";
import { readJournal, startWorld, Unit, type World } from "../../src/chaos/index.js";
import { vendd } from "../support/cli.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

// Issue 10, defect 8: `vendd journal` shows sales, unresolved sessions, sessions flagged for review and
// daily totals, read-only, from the journal of a real daemon while that daemon runs and holds the lock.

let world: World;
let unit: Unit;
const records: VendRecord[] = [];

function actors(w: World, u: Unit): ActorContext {
  return {
    emu: w.emu,
    sim: w.sim,
    beaconId: u.files.beaconId,
    phone: "+4520031801",
    payWithinMs: 6000,
    decideWithinMs: 6000,
    random: () => 0.5,
  };
}

beforeAll(async () => {
  if (!HAVE_SOCAT) return;
  requireBuiltCli();
  world = await startWorld(50);
  unit = Unit.create(world, { driver: "v10", flow: "selection" });
  await unit.start();
  const ctx = actors(world, unit);
  const settled = (n: number) =>
    waitUntil(
      () => readJournal(unit.files.journalPath).sessions.filter((s) => s.closedAt !== null).length === n,
      10_000,
    );
  records.push(await selectionVend(ctx, 1, 120, 1));
  expect(await settled(1)).toBe(true);
  records.push(await selectionVend(ctx, 2, 230, 0));
  expect(await settled(2)).toBe(true);
  // A vend whose outcome is lost in a VMC reset: captured by policy, flagged for review (MDB §7.4.7).
  world.sim.vend(3, 340);
  await customerPays(ctx, () => world.sim.reader !== "vend");
  expect(await waitUntil(() => world.sim.reader === "approved", 6000)).toBe(true);
  world.sim.vmcReset();
  expect(await settled(3)).toBe(true);
}, 90_000);
afterAll(async () => {
  await world?.close();
});

const lines = (text: string) => text.trimEnd().split("\n");

describe.skipIf(!HAVE_SOCAT)("vendd journal, while the daemon runs", () => {
  it("recent: time, order, item, price, result, captured; 80 columns; the same as the journal", async () => {
    expect(unit.running).toBe(true);
    const r = await vendd(["journal", "recent", "--config", unit.files.configPath]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toMatch(/^TIME\s+ORDER\s+ITEM\s+PRICE\s+RESULT\s+CAPTURED$/);
    for (const l of out) expect(l.length).toBeLessThanOrEqual(80);
    const journal = readJournal(unit.files.journalPath).sessions.reverse();
    // Each time names its zone (issue 43): date, time, zone, then the columns.
    expect(out.slice(1, 4).map((l) => l.split(/\s+/).slice(3, 8))).toEqual(
      journal.map((s) => [
        s.orderId,
        String(s.item),
        (s.price / 100).toFixed(2),
        s.decision?.review ? `${s.result}*` : String(s.result),
        s.result === "captured" ? ((s.decision?.amount ?? 0) / 100).toFixed(2) : "-",
      ]),
    );
    expect(journal.map((s) => s.result)).toEqual(["captured", "cancelled", "captured"]);
    expect(out.at(-1)).toBe("* flagged for review: vendd journal flagged");
  });

  it("flagged: the session and why; unresolved: none; --json", async () => {
    const flagged = await vendd(["journal", "flagged", "--config", unit.files.configPath, "--json"]);
    const parsed = JSON.parse(flagged.stdout) as {
      view: string;
      sessions: { price: number; reason: string }[];
    };
    expect(parsed.view).toBe("flagged");
    expect(parsed.sessions).toEqual([
      expect.objectContaining({
        price: 340,
        result: "captured",
        review: true,
        reason: expect.stringMatching(/reset during the vend.*policy: capture/),
      }),
    ]);
    const table = await vendd(["journal", "flagged", "--journal", unit.files.journalPath]);
    const [head, row, ...why] = lines(table.stdout);
    expect(head).toMatch(/^TIME\s+ORDER\s+PRICE\s+RESULT\s+CAPTURED$/);
    expect(row).toMatch(/3\.40\s+captured\s+3\.40$/);
    expect(why.join(" ").replace(/\s+/g, " ").trim()).toMatch(
      /^why: the machine reset during the vend \(.*\); policy: capture$/,
    );
    for (const l of lines(table.stdout)) expect(l.length).toBeLessThanOrEqual(80);
    const unresolved = await vendd(["journal", "unresolved", "--journal", unit.files.journalPath]);
    expect(unresolved.stdout).toBe(`no unresolved sessions in ${unit.files.journalPath}\n`);
  });

  it("totals per day: sessions, captured, amount", async () => {
    const r = await vendd(["journal", "totals", "--config", unit.files.configPath, "--json"]);
    const { days } = JSON.parse(r.stdout) as {
      days: { sessions: number; captured: number; capturedAmount: number }[];
    };
    expect(days).toEqual([expect.objectContaining({ sessions: 3, captured: 2, capturedAmount: 460 })]);
    const table = lines((await vendd(["journal", "totals", "--journal", unit.files.journalPath])).stdout);
    expect(table[1]).toMatch(/^\d{4}-\d\d-\d\d\s+3\s+2\s+4\.60$/);
  });

  it("held lists what the service holds; held --cancel is refused while the daemon owns the journal", async () => {
    const held = await vendd([
      "journal",
      "held",
      "--config",
      unit.files.configPath,
      "--secrets",
      unit.files.secretsPath,
    ]);
    expect(held.code).toBe(0);
    expect(held.stdout).toBe("the service holds no payment for this unit\n");
    const cancel = await vendd([
      "journal",
      "held",
      "--cancel",
      "--config",
      unit.files.configPath,
      "--secrets",
      unit.files.secretsPath,
    ]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain(
      `journal ${unit.files.journalPath} is in use by vendd (PID ${unit.daemon?.pid}`,
    );
    expect(unit.running).toBe(true);
  });

  it("usage errors exit 2; a missing journal exits 1", async () => {
    expect((await vendd(["journal", "sideways", "--journal", "/x"])).code).toBe(2);
    expect((await vendd(["journal", "--limit", "0", "--journal", "/x"])).code).toBe(2);
    expect((await vendd(["journal", "--journal", "/x", "--config", "/y"])).code).toBe(2);
    const missing = await vendd(["journal", "--journal", `${unit.files.dir}/nope.db`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no journal at");
  });
});
