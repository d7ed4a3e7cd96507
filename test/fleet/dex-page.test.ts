/**
 * The dashboard's DEX audits page and CSV (issue 36) on the composed fleet server: the empty state says what
 * to do; with reads, per unit and window the three-way classes, amounts and currency, a counter reset's new
 * baseline note, the machine's per product sales; every value HTML-escaped (a unit id and a product name
 * that are markup); the CSV carries the same rows with formula cells defused.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countersOf } from "../../drivers/dex/counters.js";
import { parseEvaDts } from "../../drivers/dex/evadts.js";
import { DexMachine } from "../../drivers/dex/simulator/machine.js";
import {
  type ComposedFleet,
  HOST,
  type Login,
  loginAs,
  startComposedFleet,
} from "../support/fleetCompose.js";
import { MANAGER, NOW, UNITS, XSS, XSS_ESCAPED } from "../support/fleetDashboard.js";

let f: ComposedFleet;
let login: Login;
beforeEach(async () => {
  f = await startComposedFleet();
  login = await loginAs(f.app, MANAGER);
});
afterEach(async () => {
  await f.close();
});

const get = (url: string) => f.app.inject({ url, headers: { host: HOST, cookie: login.cookie } });

async function storeRead(unit: string, readId: string, at: number, m: DexMachine): Promise<void> {
  const raw = m.auditFile(new Date(at));
  m.readCompleted();
  await f.ctx.db
    .insertInto("dex_reads")
    .values({
      unit_id: unit,
      read_id: readId,
      seq: at % 100_000,
      at,
      trigger: "schedule",
      outcome: "ok",
      counters: JSON.stringify(countersOf(parseEvaDts(raw))),
      raw,
      error: null,
      received_at: at,
    })
    .execute();
}

describe("the DEX audits page", () => {
  it("without reads says what to do", async () => {
    const r = await get("/dex");
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain("No DEX reads in this period");
    expect(r.body).toContain("dex.enabled: true");
    expect(r.body).toContain('href="/dex"');
    expect((await get("/dex?from=2026-13-01")).statusCode).toBe(400);
  });

  it("lists windows with classes, amounts, notes and products, escaped, and the same rows as CSV", async () => {
    const selections = [{ selection: "11", price: 150, name: XSS }];
    const m = new DexMachine({ commId: "SIM0000001", serial: "SIM000000001", selections });
    await storeRead(UNITS.evil, "r1", NOW - 6 * 3_600_000, m);
    m.vend("11", "DA");
    m.vend("11", "DA");
    await storeRead(UNITS.evil, "r2", NOW - 3 * 3_600_000, m);
    // the machine's counters were cleared (a new machine model with the same serial): a new baseline
    await storeRead(
      UNITS.evil,
      "r3",
      NOW - 3_600_000,
      new DexMachine({ commId: "SIM0000001", serial: "SIM000000001", selections }),
    );
    const r = await get("/dex?from=2026-11-25&to=2026-11-25");
    expect(r.statusCode).toBe(200);
    expect(r.body).not.toContain(XSS);
    expect(r.body).toContain(XSS_ESCAPED);
    // two vends the machine counted that this unit never journaled
    expect(r.body).toMatch(/<td>machineNotUnit<\/td><td class="num">2<\/td><td class="num">3\.00<\/td>/);
    expect(r.body).toMatch(/<td>counterReset<\/td>[\s\S]*?went backwards[\s\S]*?new baseline/);
    expect(r.body).toMatch(
      /Sales per product[\s\S]*<td>11<\/td><td>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/td><td class="num">2<\/td><td class="num">3\.00<\/td>/,
    );
    expect(r.body).toContain('href="/dex.csv?from=2026-11-25&amp;to=2026-11-25"');
    const csv = await get("/dex.csv?from=2026-11-25&to=2026-11-25");
    expect(csv.statusCode).toBe(200);
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/);
    expect(csv.headers["content-disposition"]).toBe('attachment; filename="dex-2026-11-25-2026-11-25.csv"');
    const lines = csv.body.trim().split("\r\n");
    expect(lines[0]).toMatch(/^unit,from,to,fromRead,toRead,class,count,amount,currency,/);
    expect(lines.filter((l) => l.includes(",machineNotUnit,2,300,"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes(",counterReset,"))).toHaveLength(1);
  });
});
