import { PNG } from "pngjs";
import type { Bitmap } from "./bitmap.js";

/** RGBA of a 1-bit bitmap: ink black, paper white (what a colour panel shows). */
export function bitmapRgba(bitmap: Bitmap): Uint8ClampedArray {
  const out = new Uint8ClampedArray(bitmap.width * bitmap.height * 4);
  for (let i = 0; i < bitmap.pixels.length; i++) {
    const v = bitmap.pixels[i] === 1 ? 0 : 255;
    out[i * 4] = v;
    out[i * 4 + 1] = v;
    out[i * 4 + 2] = v;
    out[i * 4 + 3] = 255;
  }
  return out;
}

/** The bitmap as a PNG file (pngjs), ink black on white, one PNG pixel per panel pixel. */
export function bitmapPng(bitmap: Bitmap): Buffer {
  const png = new PNG({ width: bitmap.width, height: bitmap.height });
  png.data = Buffer.from(bitmapRgba(bitmap).buffer);
  return PNG.sync.write(png);
}
