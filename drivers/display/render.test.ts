import { describe, expect, it } from "vitest";
import { checkinUri, type Screen } from "./display.js";
import { renderScreen, sameScreen, wrap } from "./render.js";

/** A stand-in QR: a box of the given size, so the layout tests do not depend on the QR encoder. */
const box = (rows: number, cols: number) => () => Array.from({ length: rows }, () => "#".repeat(cols));
const opts = { width: 40, height: 20, decimals: 2, qr: box(2, 4) };
const uri = checkinUri("servicepos", "123456789012345");
const render = (s: Screen, o = opts) => renderScreen(s, o).join("\n");

describe("renderScreen", () => {
  it("draws the check-in session screen with the funds left", () => {
    expect(render({ kind: "session", available: 1250, currency: "EUR" })).toBe(
      "12.50 EUR available\nChoose your products on the machine",
    );
  });

  it("draws every screen in customer words, with its amount and text", () => {
    expect(render({ kind: "idle", checkinUri: uri, message: "Choose a product" })).toMatchInlineSnapshot(`
      "Choose a product
      ####
      ####
      Scan to check in"
    `);
    expect(render({ kind: "idle", checkinUri: null, message: "Welcome" })).toMatchInlineSnapshot(`
      "Welcome"
    `);
    expect(
      render({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: uri, item: 12 }),
    ).toMatchInlineSnapshot(`
      "Pay 12.50 DKK (item 12)
      ####
      ####
      Scan with the app to pay"
    `);
    expect(
      render({ kind: "pay", amount: 5, currency: "EUR", checkinUri: uri, item: null }),
    ).toMatchInlineSnapshot(`
      "Pay 0.05 EUR
      ####
      ####
      Scan with the app to pay"
    `);
    expect(render({ kind: "connecting", amount: 1250, currency: "DKK", item: 12 })).toMatchInlineSnapshot(`
      "Pay 12.50 DKK (item 12)
      Getting your payment ready, one moment"
    `);
    expect(render({ kind: "approveInApp", amount: 1250, currency: "DKK" })).toMatchInlineSnapshot(`
      "Approve in the app
      12.50 DKK"
    `);
    expect(render({ kind: "vending", amount: 1250, currency: "DKK" })).toMatchInlineSnapshot(`
      "Vending, please wait
      12.50 DKK"
    `);
    expect(render({ kind: "thankYou", amount: 100000, currency: "DKK" })).toMatchInlineSnapshot(`
      "Thank you!
      Paid 1000.00 DKK"
    `);
    expect(render({ kind: "cancelled", reason: "Declined in the app" })).toMatchInlineSnapshot(`
      "Payment cancelled
      Declined in the app"
    `);
    expect(render({ kind: "outOfService", reason: "No network" })).toMatchInlineSnapshot(`
      "Out of service
      No network"
    `);
  });

  it("speaks to customers: no internal state name on any screen", () => {
    const screens: Screen[] = [
      { kind: "idle", checkinUri: uri, message: "Choose a product" },
      { kind: "connecting", amount: 1250, currency: "DKK", item: 12 },
      { kind: "pay", amount: 1250, currency: "DKK", checkinUri: uri, item: 12 },
      { kind: "approveInApp", amount: 1250, currency: "DKK" },
      { kind: "vending", amount: 1250, currency: "DKK" },
      { kind: "session", available: 1250, currency: "DKK" },
      { kind: "thankYou", amount: 1250, currency: "DKK" },
      { kind: "cancelled", reason: "Declined in the app" },
      { kind: "outOfService", reason: "Door open" },
    ];
    for (const screen of screens) {
      const text = render(screen);
      expect(text, screen.kind).not.toMatch(/\[[A-Za-z]+\]/);
      for (const name of ["approveInApp", "outOfService", "thankYou"]) expect(text).not.toContain(name);
    }
  });

  it("wraps long text at the width and shortens it to fit the height", () => {
    const reason = "word ".repeat(60).trim();
    const rows = renderScreen({ kind: "outOfService", reason }, { ...opts, height: 5 });
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => [...r].length <= 40)).toBe(true);
    expect(rows.at(-1)?.endsWith("…")).toBe(true);
  });

  it("never cuts a QR code taller than the screen; it drops the caption and keeps one text row", () => {
    const rows = renderScreen(
      { kind: "idle", checkinUri: uri, message: "a b c d e f" },
      { ...opts, width: 10, height: 6, qr: box(8, 8) },
    );
    expect(rows.filter((r) => r === "########")).toHaveLength(8);
    expect(rows).toEqual(["a b c d e…", ...Array.from({ length: 8 }, () => "########")]);
  });

  it("uses the currency's decimal places", () => {
    expect(renderScreen({ kind: "vending", amount: 150, currency: "ISK" }, { ...opts, decimals: 0 })[1]).toBe(
      "150 ISK",
    );
  });

  it("throws on an invalid amount (the terminal display catches it)", () => {
    expect(() => renderScreen({ kind: "vending", amount: -1, currency: "DKK" }, opts)).toThrow();
  });
});

describe("wrap", () => {
  it("breaks on spaces and splits words longer than a row", () => {
    expect(wrap("ab cd ef", 5)).toEqual(["ab cd", "ef"]);
    expect(wrap("abcdefghij k", 4)).toEqual(["abcd", "efgh", "ij k"]);
    expect(wrap("  ", 4)).toEqual([]);
  });
});

describe("sameScreen", () => {
  it("compares screens structurally", () => {
    const a: Screen = { kind: "pay", amount: 100, currency: "DKK", checkinUri: uri, item: 1 };
    expect(sameScreen(a, { ...a })).toBe(true);
    expect(sameScreen(a, { ...a, item: 2 })).toBe(false);
    expect(sameScreen(undefined, a)).toBe(false);
    expect(sameScreen({ kind: "cancelled", reason: "x" }, { kind: "outOfService", reason: "x" })).toBe(false);
  });
});
