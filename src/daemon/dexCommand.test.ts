import { describe, expect, it } from "vitest";
import type { DexReadRow } from "../journal/dexStore.js";
import { dexSummary } from "./dexCommand.js";

/** A file with both cashless devices and tokens (dex.md §7's shape; G85 is not what this checks). */
const RAW = [
  "DXS*XYZ0000001*VA*V0/6*1",
  "ST*001*0001",
  "ID4*2*1978*EUR",
  "VA1*12870*61*2370*11",
  "CA2*8070*37*1530*7",
  "DA1*VND0000001*VENDD*0100",
  "DA2*4200*20*840*4",
  "DB1*OTH0000001*OTHER*0100",
  "DB2*300*2*0*0",
  "TA2*300*2*0*0",
  "EA1*EGS*20250301*0905*12",
  "SE*11*0001",
  "DXE*1*1",
  "",
].join("\r\n");

const row = (over: Partial<DexReadRow>): DexReadRow => ({
  id: 1,
  readId: "r1",
  at: Date.UTC(2025, 2, 1, 14, 15),
  trigger: "console",
  outcome: "ok",
  role: "master",
  attempts: 1,
  raw: RAW,
  counters: null,
  g85: "absent",
  warnings: 0,
  error: null,
  ...over,
});

describe("dex last (issue 42)", () => {
  it("shows each payment device apart (cashless 1 DA2, cashless 2 DB2), tokens, and the machine's last push", () => {
    const push = row({ readId: "p1", trigger: "push", role: "slave", at: Date.UTC(2025, 2, 1, 9, 30) });
    const s = dexSummary(row({}), push);
    expect(s.read).toMatchObject({
      cashless1: "20 vends, 42.00",
      cashless2: "2 vends, 3.00",
      tokens: "2 vends, 3.00",
    });
    expect(s.push).toMatchObject({ at: "2025-03-01T09:30:00.000Z", outcome: "ok", events: ["EGS"] });
  });

  it("says there is no push, and leaves out devices a file does not have", () => {
    const s = dexSummary(row({ raw: RAW.replace(/DB[12]\*[^\r]*\r\n/g, "") }), null);
    expect(s.read).toMatchObject({ cashless1: "20 vends, 42.00", cashless2: null });
    expect(s.push).toBeNull();
    expect(dexSummary(null)).toEqual({ read: null });
  });
});
