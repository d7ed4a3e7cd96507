import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEvaDts, toMinor } from "./evadts.js";
import { segment, writeEvaDts } from "./evadtsWrite.js";

const FIXTURES = join(import.meta.dirname, "../../test/fixtures/dex");
const fixture = (name: string) => readFileSync(join(FIXTURES, name));

describe("EVA-DTS parser on the note's example (dex.md §7)", () => {
  const r = parseEvaDts(fixture("note-example.dex"));

  it("checks the envelope: G85 E36F matches, SE 27 matches, no warnings", () => {
    expect(r.check).toEqual({
      g85: "ok",
      g85Computed: "E36F",
      seDeclared: 27,
      seCounted: 27,
      seCountedWithoutLists: 27,
    });
    expect(r.warnings).toEqual([]);
    expect(r.commId).toBe("XYZ0000001");
    expect(r.version).toBe("V0/6");
  });

  it("reads ID1, ID4, ID5 and CB1", () => {
    expect(r.machine).toEqual({
      serial: "XYZ000123456",
      model: "SNACK-40",
      buildStandard: "0102",
      location: "Lobby",
      asset: "A-0042",
    });
    expect([r.decimals, r.currency, r.currencyNumeric]).toEqual([2, "EUR", "1978"]);
    expect([r.machineDate, r.machineTime]).toEqual(["20250301", "141500"]);
    expect(r.controlBoard).toEqual({ serial: "XYZ000123456", model: "VMC-9", software: "0102" });
  });

  it("reads VA1-VA3, CA2-CA4, DA1-DA2", () => {
    expect(r.vends.paid).toEqual({ valueInit: 12870, countInit: 61, valueReset: 2370, countReset: 11 });
    expect(r.vends.test).toEqual({ valueInit: 300, countInit: 2, valueReset: 0, countReset: 0 });
    expect(r.vends.free).toEqual({ valueInit: 150, countInit: 1, valueReset: 0, countReset: 0 });
    expect(r.cash.sales).toEqual({ valueInit: 8670, countInit: 41, valueReset: 1530, countReset: 7 });
    expect(r.cash.inInit).toEqual({ total: 11000, toBox: 3000, toTubes: 5000, bills: 3000 });
    expect([r.cash.dispensedReset, r.cash.dispensedInit]).toEqual([470, 2330]);
    expect(r.cashless1.device).toEqual({ serial: "VND0000001", model: "VENDD", software: "0100" });
    expect(r.cashless1.sales).toEqual({ valueInit: 4200, countInit: 20, valueReset: 840, countReset: 4 });
  });

  it("reads PA1, PA2 and PA7 per product, and the note's invariants hold", () => {
    expect(r.products.map((p) => [p.selection, p.price, p.name])).toEqual([
      ["11", 150, "Water"],
      ["12", 270, "Crisps"],
    ]);
    const water = r.products[0];
    expect(water?.paid).toEqual({ countInit: 30, valueInit: 4500, countReset: 5, valueReset: 750 });
    expect(water?.byDevice).toEqual([
      {
        device: "CA",
        priceList: "0",
        price: 150,
        countInit: 20,
        valueInit: 3000,
        countReset: 3,
        valueReset: 450,
      },
      {
        device: "DA",
        priceList: "0",
        price: 150,
        countInit: 10,
        valueInit: 1500,
        countReset: 2,
        valueReset: 300,
      },
    ]);
    const sum = (f: (p: (typeof r.products)[number]) => number) => r.products.reduce((a, p) => a + f(p), 0);
    expect(sum((p) => p.paid?.valueInit ?? 0)).toBe(r.vends.paid?.valueInit);
    const da = sum((p) =>
      p.byDevice.filter((d) => d.device === "DA").reduce((a, d) => a + (d.valueInit ?? 0), 0),
    );
    expect(da).toBe(r.cashless1.sales?.valueInit);
    expect((r.cash.sales?.valueInit ?? 0) + (r.cashless1.sales?.valueInit ?? 0)).toBe(
      r.vends.paid?.valueInit,
    );
  });

  it("reads EA1, EA2, EA3 and EA7", () => {
    expect(r.events).toEqual([{ code: "EGS", date: "20250301", time: "0905", durationMin: 12 }]);
    expect(r.eventCounters).toEqual([{ code: "EGS", countReset: 1, countInit: 14, active: false }]);
    expect(r.reads).toEqual({
      readsWithResetInit: 9,
      date: "20250301",
      time: "141500",
      readerId: "XYZ0000001",
      previousDate: "20250228",
      previousTime: "020000",
      readsTotalInit: 23,
      resetsInit: 9,
    });
    expect(r.powerOutages).toEqual({ countReset: 0, countInit: 3 });
  });

  it("keeps every segment raw, in order", () => {
    expect(r.segments).toHaveLength(29);
    expect(r.segments[0]?.id).toBe("DXS");
    expect(r.segments.at(-1)?.id).toBe("DXE");
  });
});

describe("EVA-DTS parser on real-file quirks (dex.md §6)", () => {
  const r = parseEvaDts(fixture("quirks-lf.dex"));

  it("accepts LF endings, blank padding lines and an SE count that leaves out LS/LE", () => {
    expect(r.check.g85).toBe("ok");
    expect(r.check.seDeclared).toBe(r.check.seCountedWithoutLists);
    expect(r.check.seCounted).toBe(r.check.seCountedWithoutLists + 4);
    expect(r.lists).toEqual(["0100", "0200"]);
  });

  it("trims padded fields, reads a pre-6.0 DXS and ID4 scaling (0 decimals, 0001 = USD)", () => {
    expect(r.machine.serial).toBe("ABC0000042");
    expect(r.machine.model).toBe("GVC1");
    expect(r.machine.buildStandard).toBeNull();
    expect(r.controlBoard?.software).toBe("2.01");
    expect(r.version).toBe("V1/1");
    expect([r.decimals, r.currency]).toEqual([0, "USD"]);
    expect(toMinor(2000, r.decimals, 2)).toBe(200000);
  });

  it("reads PA3, PA4, PA5, a PA103 index, PA107-109, a `*` escaped in text, DB1/DB2, TA2, EA4", () => {
    const [one, two] = r.products;
    expect(one?.name).toBe("3");
    expect(one?.test).toEqual({ countInit: 1, valueInit: 200, countReset: null, valueReset: null });
    expect(one?.free).toEqual({ countInit: 0, valueInit: 0, countReset: null, valueReset: null });
    expect(one?.soldOut).toEqual({ date: "20250302", time: "0745", timesSelected: 4 });
    expect(two?.name).toBe("Tea * lemon");
    expect([two?.notPresent, two?.level, two?.minLevel]).toEqual([true, 5, 2]);
    expect(two?.byDevice[0]?.device).toBe("DB");
    expect(r.cashless2.sales?.valueInit).toBe(300);
    expect(r.cashless2.device?.model).toBe("CARD");
    expect(r.tokens).toEqual({ valueInit: 50, countInit: 1, valueReset: 0, countReset: 0 });
    expect(r.initialised).toEqual({ date: "20200101", time: "0000" });
  });

  it("drops repeated EA1 history lines, keeps the last EA2 per code, keeps vendor codes", () => {
    expect(r.events.map((e) => e.code)).toEqual(["EGS", "EGT"]);
    expect(r.eventCounters.find((c) => c.code === "EGS")).toEqual({
      code: "EGS",
      countReset: 2,
      countInit: 41,
      active: true,
    });
    expect(r.eventCounters.map((c) => c.code)).toContain("OCM mdb");
  });

  it("keeps vendor segments raw and warns about a malformed number without failing the file", () => {
    expect(r.segments.map((s) => s.id)).toEqual(expect.arrayContaining(["MA5", "PP1", "SA2"]));
    expect(r.vends.paid).toEqual({ valueInit: null, countInit: 3, valueReset: null, countReset: null });
    expect(r.warnings).toEqual([expect.stringContaining("VA101 is not a whole number")]);
  });

  it("reports a G85 sent with swapped bytes (pre-6.0) as swapped", () => {
    expect(parseEvaDts(fixture("quirks-swapped.dex")).check.g85).toBe("swapped");
  });

  it("warns, never rejects, on a bad G85 and a wrong SE count", () => {
    const text = fixture("note-example.dex")
      .toString("latin1")
      .replace("G85*E36F", "G85*0000")
      .replace("SE*27", "SE*31");
    const bad = parseEvaDts(text);
    expect(bad.check.g85).toBe("bad");
    expect(bad.warnings).toEqual([
      "G85 is 0000, the file's CRC is E36F",
      "SE01 says 31 segments, the set has 27",
    ]);
    expect(bad.cashless1.sales?.valueInit).toBe(4200);
  });

  it("reads a file without G85 as absent", () => {
    const text = writeEvaDts([segment("DA2", 100, 1)], { commId: "XYZ0000001", noG85: true });
    const r2 = parseEvaDts(text);
    expect([r2.check.g85, r2.check.seDeclared, r2.check.seCounted]).toEqual(["absent", 3, 3]);
    expect(r2.warnings).toEqual([]);
  });

  it("writes what it reads: the writer's G85 and SE are accepted", () => {
    const text = writeEvaDts([segment("PA1", 1, 100, "A*B"), segment("DA2", 100, 1, null, null)], {
      commId: "XYZ0000001",
    });
    expect(text).toContain("PA1*1*100*A^2A^B\r\nDA2*100*1\r\n");
    const r2 = parseEvaDts(text);
    expect([r2.check.g85, r2.warnings, r2.products[0]?.name]).toEqual(["ok", [], "A*B"]);
  });
});
