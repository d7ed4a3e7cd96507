import { closeSync, constants, openSync, readFileSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import type { Logger } from "pino";
import { type Bitmap, drawScreen } from "./bitmap.js";
import type { CheckinDisplay, Screen, ShownScreen } from "./display.js";
import { sameScreen } from "./render.js";

export interface FramebufferDisplayOptions {
  /** The framebuffer device, such as `/dev/fb1` (an SPI panel through fbtft) or `/dev/fb0`. */
  device: string;
  /** The device's sysfs directory (default `/sys/class/graphics/<basename of device>`). */
  sysfs?: string | null;
  /** Overrides of what sysfs reports (tests, devices without sysfs); null or absent = read sysfs. */
  width?: number | null;
  height?: number | null;
  bitsPerPixel?: number | null;
  stride?: number | null;
  /** Decimal places of the currency's minor unit (default 2). */
  decimals?: number;
  logger?: Logger;
}

/** What the device is: visible size, pixel format and bytes per line. */
export interface FramebufferGeometry {
  width: number;
  height: number;
  bitsPerPixel: 16 | 32;
  stride: number;
}

/** A framebuffer that cannot be drawn on as configured: the message names the file and the next step. */
export class FramebufferError extends Error {
  override readonly name = "FramebufferError";
}

/**
 * The device's geometry: each value from the options when given, else from sysfs (`virtual_size` as
 * `W,H`, `bits_per_pixel`, `stride`; a missing `stride` is width × bytes per pixel).
 * @throws FramebufferError for an unreadable sysfs value with no override, or a pixel format other than
 *   16 (RGB565) and 32 (XRGB8888).
 */
export function framebufferGeometry(opts: FramebufferDisplayOptions): FramebufferGeometry {
  const dir = opts.sysfs ?? join("/sys/class/graphics", basename(opts.device));
  const read = (name: string, key: string): string => {
    try {
      return readFileSync(join(dir, name), "utf8").trim();
    } catch (err) {
      const code = err instanceof Error && "code" in err ? String(err.code) : "unreadable";
      throw new FramebufferError(
        `cannot read ${join(dir, name)} (${code}) for ${opts.device}: is the panel's overlay loaded ` +
          `(docs/operators.md, "A small screen")? Or set display.${key} (and display.sysfs) in the config`,
      );
    }
  };
  let width = opts.width ?? null;
  let height = opts.height ?? null;
  if (width === null || height === null) {
    const size = /^(\d+),(\d+)$/.exec(read("virtual_size", "width and display.height"));
    if (size === null) throw new FramebufferError(`${join(dir, "virtual_size")} is not W,H`);
    width ??= Number(size[1]);
    height ??= Number(size[2]);
  }
  const bpp = opts.bitsPerPixel ?? Number(read("bits_per_pixel", "bitsPerPixel"));
  if (bpp !== 16 && bpp !== 32) {
    throw new FramebufferError(
      `${opts.device} has ${bpp} bits per pixel; vendd draws 16 (RGB565) or 32 (XRGB8888): set the ` +
        "panel's overlay to one of them (for fbtft, its bpp parameter) or display.bitsPerPixel",
    );
  }
  const bytes = bpp / 8;
  let stride = opts.stride ?? null;
  if (stride === null) {
    let text: string | null = null;
    try {
      text = readFileSync(join(dir, "stride"), "utf8").trim();
    } catch {
      // Older kernels have no stride file: lines are packed.
    }
    stride = text === null ? width * bytes : Number(text);
  }
  if (!Number.isInteger(stride) || stride < width * bytes) {
    throw new FramebufferError(
      `${opts.device}: a line of ${width} pixels at ${bpp} bpp needs ${width * bytes} bytes, the stride is ${stride}`,
    );
  }
  return { width, height, bitsPerPixel: bpp, stride };
}

/** Ink and paper in the device's pixel format: black and white (little-endian, as the Pi's panels). */
export function framebufferFrame(bitmap: Bitmap, g: FramebufferGeometry): Buffer {
  const frame = Buffer.alloc(g.stride * g.height);
  const bytes = g.bitsPerPixel / 8;
  for (let y = 0; y < Math.min(g.height, bitmap.height); y++) {
    const row = y * g.stride;
    for (let x = 0; x < Math.min(g.width, bitmap.width); x++) {
      if (bitmap.pixels[y * bitmap.width + x] === 1) continue; // ink: black, the buffer's zero
      if (bytes === 2) frame.writeUInt16LE(0xffff, row + x * 2);
      else frame.writeUInt32LE(0x00ffffff, row + x * 4);
    }
  }
  return frame;
}

/**
 * A check-in display drawn on a Linux framebuffer (an SPI TFT through fbtft as `/dev/fb1`, a DSI or HDMI
 * panel as `/dev/fb0`): each screen as a 1-bit picture (bitmap.ts), converted to the device's pixel format
 * and written as one positioned write of the whole frame at offset 0.
 *
 * Failure semantics (display.ts): `show` never throws. A device that cannot be opened, a geometry that
 * cannot be read or is not supported, a failed write or a screen that cannot be rendered is logged once
 * (until the next successful draw); the device is tried again at the next screen. The last screen drawn
 * stays on the panel and is what `current()` reports.
 */
export function createFramebufferDisplay(opts: FramebufferDisplayOptions): CheckinDisplay {
  const decimals = opts.decimals ?? 2;
  let failing = false;
  const fail = (err: unknown, what: string) => {
    if (failing) return;
    failing = true;
    opts.logger?.error({ err }, `display: ${what}`);
  };
  let fd: number | null = null;
  let geometry: FramebufferGeometry | null = null;
  let shown: ShownScreen | undefined;
  let closed = false;

  const open = (): FramebufferGeometry => {
    geometry ??= framebufferGeometry(opts);
    // Never O_CREAT: a missing device is an error, not a new file in /dev.
    fd ??= openSync(opts.device, constants.O_WRONLY);
    return geometry;
  };

  return {
    kind: "framebuffer",
    show(screen: Screen): void {
      if (closed || sameScreen(shown?.screen, screen)) return;
      let g: FramebufferGeometry;
      try {
        g = open();
      } catch (err) {
        fail(err, err instanceof FramebufferError ? err.message : `cannot open ${opts.device}`);
        return;
      }
      let bitmap: Bitmap;
      try {
        bitmap = drawScreen(screen, { width: g.width, height: g.height, decimals }).bitmap;
      } catch (err) {
        fail(err, `cannot render the ${screen.kind} screen`);
        return;
      }
      try {
        const frame = framebufferFrame(bitmap, g);
        if (fd === null) return;
        writeSync(fd, frame, 0, frame.length, 0);
      } catch (err) {
        fail(err, `write to ${opts.device} failed`);
        return;
      }
      failing = false;
      shown = { screen, bitmap };
    },
    current: () => shown,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
