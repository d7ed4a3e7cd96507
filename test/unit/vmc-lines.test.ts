import { describe, expect, it } from "vitest";
import { createCashlessDialect, LineSplitter } from "../../drivers/vmc/adapter/index.js";

describe("LineSplitter", () => {
  it("splits, joins across chunks, strips \\r\\n", () => {
    const s = new LineSplitter(16);
    expect(s.push(Buffer.from("a,b\r\nc"))).toEqual({ lines: ["a,b"], overlong: 0 });
    expect(s.push(Buffer.from(",d\n\n"))).toEqual({ lines: ["c,d", ""], overlong: 0 });
  });

  it("cuts over-long lines, counts each once, and never holds more than the bound", () => {
    const s = new LineSplitter(8);
    expect(s.push(Buffer.from("123456789"))).toEqual({ lines: [], overlong: 0 }); // 9 ≤ 8 + room for \r
    expect(s.push(Buffer.from("0".repeat(10_000)))).toEqual({ lines: [], overlong: 1 });
    expect(s.push(Buffer.from("more\nok\n"))).toEqual({ lines: ["ok"], overlong: 0 });
    expect(s.push(Buffer.from("12345678\r\n123456789\n"))).toEqual({ lines: ["12345678"], overlong: 1 });
  });
});

describe("cashless adapter dialect (vending-mdb §2.2, §2.3)", () => {
  const d = createCashlessDialect(2);

  it.each([
    ["r,ACK", { kind: "ack" }],
    ["c,STATUS,ENABLED", { kind: "status", status: "enabled" }],
    ["c,STATUS,IDLE", { kind: "sessionIdle", funds: null }],
    ["c,STATUS,IDLE,5.00", { kind: "sessionIdle", funds: 500 }],
    ["c,STATUS,IDLE,0", { kind: "sessionIdle", funds: 0 }],
    ["c,STATUS,VEND,15.19,17", { kind: "vendRequest", price: 1519, item: 17 }],
    // Huge prices are read exactly (the engine's engine.maxPrice denies them), never rounded or wrapped.
    ["c,STATUS,VEND,99999999999,1", { kind: "vendRequest", price: 9_999_999_999_900, item: 1 }],
    ["c,STATUS,VEND,9999999999999.99,1", { kind: "vendRequest", price: 999_999_999_999_999, item: 1 }],
    ["c,STATUS,VEND,0,1", { kind: "vendRequest", price: 0, item: 1 }],
    ["c,VEND,SUCCESS", { kind: "vendSuccess", item: null }],
    ["c,ERR,VEND 3", { kind: "vendFailure" }],
    ["c,ERR,VEND 1", { kind: "vendCancel" }],
    ['c,ERR,"VEND -3"', { kind: "error", text: "VEND -3" }],
    ["c,SET,OK", { kind: "configured" }],
    ["c,1", { kind: "switched", enabled: true }],
    ["v,MDB-USB,1.2", { kind: "info", text: "v,MDB-USB,1.2" }],
  ])("reads %s", (text, msg) => {
    expect(d.parse(text)).toEqual(msg);
  });

  it.each([
    "c,STATUS,VEND,15.191,17",
    "c,STATUS,VEND,1.00,70000",
    // Beyond 13 integer digits a double no longer holds every minor unit: refused, not approximated.
    "c,STATUS,VEND,99999999999999,1",
    "c,STATUS,VEND,1e12,1",
    "c,STATUS,VEND,-1.00,1",
    "c,STATUS,VEND,0x10,1",
    "c,STATUS,VEND, 1.00,1",
    "c,STATUS,VEND,1.00,1e3",
    "c,STATUS,VEND,1.00",
    "c,STATUS,FOO",
    "C,1",
    "c,2",
    "\u00ff",
    "",
  ])("refuses %j", (text) => {
    expect(d.parse(text).kind).toBe("invalid");
  });

  it("formats commands with exact amounts", () => {
    expect(d.format({ kind: "approve", amount: 1519 })).toBe("C,VEND,15.19");
    expect(d.format({ kind: "start", funds: 500 })).toBe("C,START,5.00");
    expect(d.format({ kind: "deny" })).toBe("C,VEND,-1");
    expect(d.format({ kind: "stop" })).toBe("C,STOP");
    expect(d.configure({ currencyCode: "DKK", alwaysIdle: true }).map((c) => d.format(c))).toEqual([
      "C,SETCONF,mdb-currency-code=0x1208",
      "C,SETCONF,mdb-always-idle=1",
    ]);
    expect(() => d.format({ kind: "display", text: "x".repeat(33) })).toThrow(RangeError);
  });
});
