/** A stand-in framebuffer for tests: a regular file as the device and a fake sysfs directory beside it. */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface FakeFramebuffer {
  device: string;
  sysfs: string;
  width: number;
  height: number;
  bpp: number;
  stride: number;
}

/**
 * Creates `<dir>/fb1` (a regular file of the frame's size) and `<dir>/sys/fb1/` with `virtual_size`,
 * `bits_per_pixel` and `stride` as the kernel writes them.
 */
export function fakeFramebuffer(width: number, height: number, bpp: number, stride = (width * bpp) / 8) {
  const dir = mkdtempSync(join(tmpdir(), "vendd-fb-"));
  const device = join(dir, "fb1");
  const sysfs = join(dir, "sys", "fb1");
  mkdirSync(sysfs, { recursive: true });
  writeFileSync(join(sysfs, "virtual_size"), `${width},${height}\n`);
  writeFileSync(join(sysfs, "bits_per_pixel"), `${bpp}\n`);
  writeFileSync(join(sysfs, "stride"), `${stride}\n`);
  writeFileSync(device, Buffer.alloc(stride * height));
  return { device, sysfs, width, height, bpp, stride } satisfies FakeFramebuffer;
}

/** The frame in the file as RGBA, read back in the device's pixel format (RGB565 or XRGB8888, LE). */
export function readFramebuffer(fb: FakeFramebuffer): Uint8ClampedArray {
  const raw = readFileSync(fb.device);
  const out = new Uint8ClampedArray(fb.width * fb.height * 4);
  for (let y = 0; y < fb.height; y++) {
    for (let x = 0; x < fb.width; x++) {
      let r: number;
      let g: number;
      let b: number;
      if (fb.bpp === 16) {
        const v = raw.readUInt16LE(y * fb.stride + x * 2);
        r = ((v >> 11) & 0x1f) << 3;
        g = ((v >> 5) & 0x3f) << 2;
        b = (v & 0x1f) << 3;
      } else {
        const v = raw.readUInt32LE(y * fb.stride + x * 4);
        r = (v >> 16) & 0xff;
        g = (v >> 8) & 0xff;
        b = v & 0xff;
      }
      const i = (y * fb.width + x) * 4;
      out[i] = r;
      out[i + 1] = g;
      out[i + 2] = b;
      out[i + 3] = 255;
    }
  }
  return out;
}
