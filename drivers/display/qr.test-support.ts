/** Reads a drawn screen back like a phone would: jsQR on the pixels (tests only; jsqr is a dev dependency). */
import jsQRModule from "jsqr";
import { PNG } from "pngjs";
import type { Bitmap } from "./bitmap.js";
import { bitmapRgba } from "./png.js";

/** jsqr is CommonJS with a `default` property; under NodeNext its default import is the module object. */
const jsQR = jsQRModule.default;

/** The text of the QR code jsQR finds in RGBA pixels, or null. */
export function decodeRgba(rgba: Uint8ClampedArray, width: number, height: number): string | null {
  return jsQR(rgba, width, height, { inversionAttempts: "dontInvert" })?.data ?? null;
}

/** The text of the QR code in a PNG file's bytes (read back with pngjs, as any viewer would), or null. */
export function decodePng(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return decodeRgba(new Uint8ClampedArray(image.data), image.width, image.height);
}

/** The text of the QR code in a 1-bit bitmap (ink black on white), or null. */
export function decodeBitmap(bitmap: Bitmap): string | null {
  return decodeRgba(bitmapRgba(bitmap), bitmap.width, bitmap.height);
}

/** The bitmap as rows of `#` (ink) and `.` (paper), for readable failures and layout checks. */
export function bitmapRows(bitmap: Bitmap): string[] {
  const rows: string[] = [];
  for (let y = 0; y < bitmap.height; y++) {
    let row = "";
    for (let x = 0; x < bitmap.width; x++) row += bitmap.pixels[y * bitmap.width + x] === 1 ? "#" : ".";
    rows.push(row);
  }
  return rows;
}
