/**
 * The framebuffer follows the engine through a vend (issue 46): the real engine with the sim VMC and sim
 * payment service draws on a stand-in framebuffer file; each frame is read back from the file and checked
 * against the screen the engine was in, and the pay screen's QR code decodes to the unit's check-in link.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";
import { drawScreen } from "./bitmap.js";
import { type CheckinDisplay, checkinUri, type Screen } from "./display.js";
import { createFramebufferDisplay } from "./framebuffer.js";
import { fakeFramebuffer, readFramebuffer } from "./framebuffer.test-support.js";
import { decodeRgba } from "./qr.test-support.js";
import type { SimDisplay } from "./sim.js";

let unit: TestUnit | undefined;
afterEach(async () => {
  await unit?.engine.stop();
  unit?.journal.close();
  unit = undefined;
});

/** Ink as the frame holds it: black pixels (both formats store black as zero bytes). */
function inkOf(rgba: Uint8ClampedArray): Uint8Array {
  const out = new Uint8Array(rgba.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = rgba[i * 4] === 0 ? 1 : 0;
  return out;
}

describe("framebuffer display through a vend", () => {
  for (const bpp of [16, 32] as const) {
    it(`shows idle, the price, the QR code to pay, vending and idle again, read from the ${bpp}-bit frames`, async () => {
      const fb = fakeFramebuffer(240, 240, bpp);
      const frames: { screen: Screen; rgba: Uint8ClampedArray }[] = [];
      const tee = (sim: SimDisplay): CheckinDisplay => {
        const panel = createFramebufferDisplay({ device: fb.device, sysfs: fb.sysfs });
        return {
          kind: "framebuffer",
          show(screen) {
            const before = panel.current();
            panel.show(screen);
            sim.show(screen);
            if (panel.current() !== before) frames.push({ screen, rgba: readFramebuffer(fb) });
          },
          current: () => panel.current(),
          close: async () => {
            await panel.close();
            await sim.close();
          },
        };
      };
      unit = await startTestUnit({ display: tee });
      expect(unit.vmc.requestVend(12, 150)).toBe(true);
      await unit.run();
      expect(unit.vmc.vends).toEqual([{ item: 12, price: 150, result: "delivered" }]);
      expect(frames.map((f) => f.screen.kind)).toEqual([
        "outOfService",
        "idle",
        "connecting",
        "pay",
        "approveInApp",
        "vending",
        "thankYou",
        "idle",
      ]);
      // Each frame in the file is exactly the picture of the engine's screen at that moment.
      for (const f of frames) {
        const want = drawScreen(f.screen, { width: 240, height: 240, decimals: 2 }).bitmap.pixels;
        expect(Buffer.from(inkOf(f.rgba)).equals(Buffer.from(want)), f.screen.kind).toBe(true);
      }
      const link = checkinUri("servicepos", "100000000000001");
      const decoded = frames.map((f) => decodeRgba(f.rgba, 240, 240));
      expect(decoded).toEqual([null, null, null, link, null, null, null, null]);
      // The price is on the screen before the QR code, and the frames of a vend all differ.
      expect(frames[2]?.screen).toMatchObject({ kind: "connecting", amount: 150, item: 12 });
      expect(new Set(frames.map((f) => Buffer.from(f.rgba).toString("base64"))).size).toBe(frames.length - 1);
      expect(readFileSync(fb.device)).toHaveLength(fb.stride * 240);
    });
  }
});
