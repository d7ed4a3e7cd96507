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
      "[session] 12.50 EUR available\nChoose your products on the machine",
    );
  });

  it("draws every screen with its state name, amount and text", () => {
    expect(render({ kind: "idle", checkinUri: uri, message: "Choose a product" })).toMatchInlineSnapshot(`
      "[idle]
      Choose a product
      ####
      ####
      Scan to check in"
    `);
    expect(render({ kind: "idle", checkinUri: null, message: "Welcome" })).toMatchInlineSnapshot(`
      "[idle]
      Welcome"
    `);
    expect(
      render({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: uri, item: 12 }),
    ).toMatchInlineSnapshot(`
      "[pay] 12.50 DKK item 12
      ####
      ####
      Scan with the app to pay"
    `);
    expect(
      render({ kind: "pay", amount: 5, currency: "EUR", checkinUri: uri, item: null }),
    ).toMatchInlineSnapshot(`
      "[pay] 0.05 EUR
      ####
      ####
      Scan with the app to pay"
    `);
    expect(render({ kind: "approveInApp", amount: 1250, currency: "DKK" })).toMatchInlineSnapshot(`
      "[approveInApp] 12.50 DKK
      Approve the payment in the app"
    `);
    expect(render({ kind: "vending", amount: 1250, currency: "DKK" })).toMatchInlineSnapshot(`
      "[vending] 12.50 DKK
      Vending, please wait"
    `);
    expect(render({ kind: "thankYou", amount: 100000, currency: "DKK" })).toMatchInlineSnapshot(`
      "[thankYou] 1000.00 DKK
      Paid. Thank you!"
    `);
    expect(render({ kind: "cancelled", reason: "Declined in the app" })).toMatchInlineSnapshot(`
      "[cancelled]
      Payment cancelled
      Declined in the app"
    `);
    expect(render({ kind: "outOfService", reason: "No network" })).toMatchInlineSnapshot(`
      "[outOfService]
      Out of service
      No network"
    `);
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
    expect(rows).toEqual(["[idle]", "a b c d e…", ...Array.from({ length: 8 }, () => "########")]);
  });

  it("uses the currency's decimal places", () => {
    expect(renderScreen({ kind: "vending", amount: 150, currency: "ISK" }, { ...opts, decimals: 0 })[0]).toBe(
      "[vending] 150 ISK",
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
