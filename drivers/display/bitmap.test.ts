import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Bitmap, drawScreen, QUIET_MODULES, qrMatrix } from "./bitmap.js";
import { checkinUri, type Screen } from "./display.js";
import { bitmapPng } from "./png.js";
import { decodeBitmap, decodePng } from "./qr.test-support.js";

const digits = checkinUri("servicepos", "123456789012345");
const guid = checkinUri("servicepos", "CD851CD7-8398-4A03-83C1-391A2F5CB71C");
const SIZES = [
  [240, 240],
  [320, 240],
  [128, 64],
] as const;
const draw = (s: Screen, w: number, h: number) =>
  drawScreen(s, { width: w, height: h, decimals: 2, quiet: w === 128 && h === 64 ? "fit" : "full" });
const ink = (b: Bitmap, x0: number, y0: number, x1: number, y1: number) => {
  let n = 0;
  for (let y = Math.max(0, y0); y < Math.min(b.height, y1); y++)
    for (let x = Math.max(0, x0); x < Math.min(b.width, x1); x++) n += b.pixels[y * b.width + x] ?? 0;
  return n;
};

describe("drawScreen", () => {
  it("draws the idle and pay QR codes a phone decodes to the check-in link, at every panel size", () => {
    for (const [w, h] of SIZES) {
      for (const uri of [digits, ...(h > 64 ? [guid] : [])]) {
        const idle = draw({ kind: "idle", checkinUri: uri, message: "Check in with the app to shop" }, w, h);
        expect(decodeBitmap(idle.bitmap), `${w}x${h} idle`).toBe(uri);
        const pay = draw({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: uri, item: 7 }, w, h);
        expect(decodeBitmap(pay.bitmap), `${w}x${h} pay`).toBe(uri);
      }
    }
  });

  it("draws whole pixels per module, as large as fits, with the quiet zone clear of any ink", () => {
    const cases = [
      // 240 px less a head and caption row (16 px each) and one message row: 192 px / 37 modules.
      [240, 240, "full", 5],
      [320, 240, "full", 5],
      // 64 px: 29 modules x 2 px = 58 px, 3 px left each side (at least 1 module).
      [128, 64, "fit", 2],
    ] as const;
    for (const [w, h, quiet, scale] of cases) {
      const d = drawScreen(
        { kind: "idle", checkinUri: digits, message: "word ".repeat(80) },
        { width: w, height: h, decimals: 2, quiet },
      );
      const qr = d.qr;
      if (qr === null) throw new Error("no QR code drawn");
      expect(qr).toMatchObject({ modules: 29, scale });
      const m = qrMatrix(digits);
      for (let r = 0; r < m.size; r++)
        for (let c = 0; c < m.size; c++) {
          const px = d.bitmap.pixels[(qr.y + r * scale) * w + qr.x + c * scale];
          expect(px, `${w}x${h} module ${r},${c}`).toBe(m.dark(r, c) ? 1 : 0);
        }
      const q = (quiet === "full" ? QUIET_MODULES : 1) * scale;
      const side = qr.modules * scale;
      // The quiet-zone ring holds no ink: text never runs into the code.
      const box = ink(d.bitmap, qr.x - q, qr.y - q, qr.x + side + q, qr.y + side + q);
      const code = ink(d.bitmap, qr.x, qr.y, qr.x + side, qr.y + side);
      expect(box - code, `${w}x${h} quiet zone`).toBe(0);
      // The long message was cut with the ellipsis, not drawn over the code.
      expect(ink(d.bitmap, 0, 0, w, h)).toBeGreaterThan(code);
    }
  });

  it("draws each screen the unit has, with its words, and screens differ", () => {
    const screens: Screen[] = [
      { kind: "idle", checkinUri: digits, message: "Check in with the app to shop" },
      { kind: "idle", checkinUri: null, message: "Card payments are unavailable right now" },
      { kind: "connecting", amount: 1250, currency: "DKK", item: 12 },
      { kind: "pay", amount: 1250, currency: "DKK", checkinUri: digits, item: 12 },
      { kind: "vending", amount: 1250, currency: "DKK" },
      { kind: "thankYou", amount: 1250, currency: "DKK" },
      { kind: "outOfService", reason: "No network" },
    ];
    for (const [w, h] of SIZES) {
      const seen = new Set<string>();
      for (const s of screens) {
        const d = draw(s, w, h);
        expect(d.bitmap.pixels).toHaveLength(w * h);
        expect(ink(d.bitmap, 0, 0, w, h), `${s.kind} ${w}x${h}`).toBeGreaterThan(50);
        seen.add(Buffer.from(d.bitmap.pixels).toString("base64"));
      }
      expect(seen.size).toBe(screens.length);
    }
  });

  it("cuts text that does not fit with an ellipsis inside the panel", () => {
    const a = draw({ kind: "outOfService", reason: "word ".repeat(200) }, 128, 64);
    const b = draw({ kind: "outOfService", reason: "word ".repeat(300) }, 128, 64);
    // The panel holds 8 rows of 21 characters; more words change nothing once it is full.
    expect(Buffer.from(a.bitmap.pixels).equals(Buffer.from(b.bitmap.pixels))).toBe(true);
    // The last row ends in the ellipsis: three dots on the glyph's bottom row (y = 7 x 8 + 6).
    const row = Array.from(a.bitmap.pixels.slice(62 * 128, 63 * 128));
    const last = row.lastIndexOf(1);
    expect(row.slice(last - 4, last + 1)).toEqual([1, 0, 1, 0, 1]);
    expect(Array.from(a.bitmap.pixels.slice(63 * 128)).every((p) => p === 0)).toBe(true);
  });

  it("is pure: the same screen gives the same pixels", () => {
    const s: Screen = { kind: "pay", amount: 5, currency: "EUR", checkinUri: guid, item: null };
    const once = Buffer.from(draw(s, 240, 240).bitmap.pixels);
    expect(once.equals(Buffer.from(draw(s, 240, 240).bitmap.pixels))).toBe(true);
  });

  it("the pay screen's PNG file decodes", () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-bitmap-"));
    const file = join(dir, "pay.png");
    const d = draw({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: guid, item: 7 }, 240, 240);
    writeFileSync(file, bitmapPng(d.bitmap));
    expect(decodePng(readFileSync(file))).toBe(guid);
  });
});
