/**
 * DEX reads from the unit's journal to the fleet (issue 36), on SQLite and PostgreSQL: a read is journaled
 * with its `dex` outbox event in one transaction, the event is valid on the wire, and the fleet stores each
 * read once in `dex_reads` (migration 0006_dex), however often its batch is sent again.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_SELECTIONS } from "../../drivers/dex/simulator/index.js";
import { DexMachine } from "../../drivers/dex/simulator/machine.js";
import { ManualClock } from "../../src/core/clock.js";
import { UnitEvent } from "../../src/core/fleetWire.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { ingestBatch } from "../../src/fleet/ingest/store.js";
import type { NewDexRead } from "../../src/journal/dexStore.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { machineRead } from "../support/dex.js";
import { fleetContext } from "../support/fleet.js";
import { postgresAndDir } from "../support/postgres.js";

const T0 = Date.parse("2026-11-28T12:00:00Z");
const files = postgresAndDir("vendd-fleet-dex-");

function journaledReads(): UnitEvent[] {
  const clock = new ManualClock(T0);
  const j = openSqliteJournal({ path: ":memory:", unitId: "vm-x", clock, outbox: { currency: "EUR" } });
  const machine = new DexMachine({
    commId: "SIM0000001",
    serial: "SIM000000001",
    selections: DEFAULT_SELECTIONS,
  });
  const read = (readId: string, at: number): NewDexRead => machineRead(machine, readId, at);
  machine.vend("11", "DA");
  expect(j.recordDexRead(read("read-1", T0))).toBe(true);
  machine.vend("12", "DA");
  const second = read("read-2", T0 + 3_600_000);
  expect(j.recordDexRead(second)).toBe(true);
  // the same read recorded again (a restart that replays it) adds nothing
  expect(j.recordDexRead(second)).toBe(false);
  const events = j.outboxPending(100).map((e) => UnitEvent.parse(e));
  j.close();
  return events;
}

async function addUnit(ctx: FleetContext, id: string): Promise<void> {
  await ctx.db
    .insertInto("units")
    .values({
      id,
      public_key: `key-${id}`,
      fingerprint: "fp",
      label: "site",
      status: "approved",
      enrolled_at: T0,
      backlog_events: 0,
      unresolved: 0,
    })
    .execute();
}

async function ingestTwice(target: string): Promise<void> {
  const events = journaledReads();
  expect(events.map((e) => [e.seq, e.kind])).toEqual([
    [1, "dex"],
    [2, "dex"],
  ]);
  const { ctx, fdb } = await fleetContext(target, new ManualClock(T0));
  try {
    await addUnit(ctx, "vm-x");
    expect(await ingestBatch(ctx, "vm-x", events)).toMatchObject({ committed: 2, stored: 2 });
    // the answer was lost: the unit sends the same batch again, and a part of it once more
    expect(await ingestBatch(ctx, "vm-x", events, undefined, 0)).toMatchObject({ committed: 2, stored: 0 });
    expect(await ingestBatch(ctx, "vm-x", events.slice(1), undefined, 2)).toMatchObject({ stored: 0 });
    const rows = await ctx.db.selectFrom("dex_reads").selectAll().orderBy("at").execute();
    expect(rows.map((r) => [r.unit_id, r.read_id, Number(r.seq), r.outcome])).toEqual([
      ["vm-x", "read-1", 1, "ok"],
      ["vm-x", "read-2", 2, "ok"],
    ]);
    const counters = JSON.parse(rows[1]?.counters ?? "null") as {
      cashless: { count: number; value: number };
    };
    expect(counters.cashless).toEqual({ count: 2, value: 420 });
    expect(rows[1]?.raw).toMatch(/^DXS\*SIM0000001/);
  } finally {
    await fdb.close();
  }
}

describe("DEX reads reach the fleet once", () => {
  it("on SQLite", async () => {
    await ingestTwice(join(files.dir, "fleet.db"));
  });

  it("on PostgreSQL", async () => {
    await ingestTwice(await files.pg.createDatabase("dex_ingest"));
  });
});
