import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { checkinUri, type Screen } from "./display.js";
import { createDisplay } from "./factory.js";
import { createFramebufferDisplay, FramebufferError, framebufferGeometry } from "./framebuffer.js";
import { fakeFramebuffer, readFramebuffer } from "./framebuffer.test-support.js";
import { decodeRgba } from "./qr.test-support.js";

const link = checkinUri("servicepos", "123456789012345");
const idle: Screen = { kind: "idle", checkinUri: link, message: "Check in with the app to shop" };

function captureLogger() {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(chunk.toString("utf8"));
      cb();
    },
  });
  return { logger: pino({ level: "error" }, out), lines };
}

describe("framebuffer display", () => {
  for (const [w, h] of [
    [240, 240],
    [320, 240],
  ] as const) {
    for (const bpp of [16, 32] as const) {
      it(`draws a check-in QR code a phone reads on a ${w}x${h} ${bpp}-bit framebuffer (geometry from sysfs)`, async () => {
        const fb = fakeFramebuffer(w, h, bpp);
        const d = await createDisplay({ kind: "framebuffer", device: fb.device, sysfs: fb.sysfs });
        d.show(idle);
        expect(decodeRgba(readFramebuffer(fb), w, h)).toBe(link);
        d.show({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: link, item: 3 });
        expect(decodeRgba(readFramebuffer(fb), w, h)).toBe(link);
        expect(d.current()?.screen.kind).toBe("pay");
        expect(d.current()?.bitmap).toMatchObject({ width: w, height: h });
        await d.close();
        // One whole frame, written in place: the file keeps the device's size.
        expect(statSync(fb.device).size).toBe(fb.stride * h);
      });
    }
  }

  it("honours a stride wider than a line (padding bytes left alone)", async () => {
    const fb = fakeFramebuffer(240, 240, 16, 512);
    const d = createFramebufferDisplay({ device: fb.device, sysfs: fb.sysfs });
    d.show(idle);
    expect(decodeRgba(readFramebuffer(fb), 240, 240)).toBe(link);
    const raw = readFileSync(fb.device);
    for (let y = 0; y < 240; y++)
      expect(raw.subarray(y * 512 + 480, (y + 1) * 512).every((b) => b === 0)).toBe(true);
    await d.close();
  });

  it("takes the geometry from the config when there is no sysfs", async () => {
    const fb = fakeFramebuffer(320, 240, 32);
    const d = createFramebufferDisplay({
      device: fb.device,
      sysfs: join(fb.sysfs, "missing"),
      width: 320,
      height: 240,
      bitsPerPixel: 32,
      stride: null,
    });
    d.show(idle);
    expect(decodeRgba(readFramebuffer(fb), 320, 240)).toBe(link);
    await d.close();
  });

  it("refuses a pixel format other than 16 and 32 bits with a clear error, and draws nothing", async () => {
    const fb = fakeFramebuffer(240, 240, 24);
    expect(() => framebufferGeometry({ device: fb.device, sysfs: fb.sysfs })).toThrow(FramebufferError);
    expect(() => framebufferGeometry({ device: fb.device, sysfs: fb.sysfs })).toThrow(
      `${fb.device} has 24 bits per pixel; vendd draws 16 (RGB565) or 32 (XRGB8888)`,
    );
    const { logger, lines } = captureLogger();
    const d = createFramebufferDisplay({ device: fb.device, sysfs: fb.sysfs, logger });
    expect(() => d.show(idle)).not.toThrow();
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("24 bits per pixel");
    expect(readFileSync(fb.device).every((b) => b === 0)).toBe(true);
    expect(d.current()).toBeUndefined();
    await d.close();
  });

  it("names the sysfs file and the config keys when the geometry cannot be read", () => {
    const fb = fakeFramebuffer(240, 240, 16);
    expect(() => framebufferGeometry({ device: fb.device, sysfs: join(fb.sysfs, "nope") })).toThrow(
      /cannot read .*nope\/virtual_size \(ENOENT\) .*display\.width and display\.height/,
    );
  });

  it("never creates a missing device and logs the failure once", async () => {
    const fb = fakeFramebuffer(240, 240, 16);
    const { logger, lines } = captureLogger();
    const d = createFramebufferDisplay({ device: `${fb.device}-absent`, sysfs: fb.sysfs, logger });
    d.show(idle);
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    expect(lines).toHaveLength(1);
    expect(() => statSync(`${fb.device}-absent`)).toThrow();
    expect(d.current()).toBeUndefined();
    await d.close();
  });

  it("keeps the last screen when a screen cannot be rendered", async () => {
    const fb = fakeFramebuffer(240, 240, 16);
    const d = createFramebufferDisplay({ device: fb.device, sysfs: fb.sysfs });
    d.show(idle);
    const before = readFileSync(fb.device);
    d.show({ kind: "vending", amount: -5, currency: "DKK" });
    expect(readFileSync(fb.device).equals(before)).toBe(true);
    expect(d.current()?.screen).toEqual(idle);
    await d.close();
  });
});
