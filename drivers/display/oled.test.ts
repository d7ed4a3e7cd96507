import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkinUri, type Screen } from "./display.js";
import { createDisplay } from "./factory.js";
import { CONTROL_COMMANDS, INIT } from "./oled.js";
import { panelPicture, recordingBus } from "./oled.test-support.js";
import { bitmapPng } from "./png.js";
import { decodeBitmap, decodePng } from "./qr.test-support.js";

const link = checkinUri("servicepos", "123456789012345");
const idle: Screen = { kind: "idle", checkinUri: link, message: "Check in with the app to shop" };

/** The picture scaled up `k` times with a white border, as a camera sees the lit panel from close by. */
function enlarged(p: ReturnType<typeof panelPicture>, k: number) {
  const w = p.width * k;
  const pixels = new Uint8Array(w * p.height * k);
  for (let y = 0; y < p.height * k; y++)
    for (let x = 0; x < w; x++)
      pixels[y * w + x] = p.pixels[Math.floor(y / k) * p.width + Math.floor(x / k)] ?? 0;
  return { width: w, height: p.height * k, pixels };
}

describe("I2C OLED display", () => {
  for (const controller of ["ssd1306", "sh1106"] as const) {
    it(`${controller}: initialises the panel, writes 8 pages, and the panel shows a QR code a phone reads`, async () => {
      const bus = recordingBus();
      const opens: [number, number][] = [];
      const d = await createDisplay(
        { kind: controller, bus: 1, address: 0x3c },
        {
          openI2c: async (n, a) => {
            opens.push([n, a]);
            return bus;
          },
        },
      );
      expect(opens).toEqual([]); // nothing opened before the first screen
      d.show(idle);
      d.show(idle);
      d.show({ kind: "pay", amount: 1250, currency: "DKK", checkinUri: link, item: 4 });
      await d.close();
      expect(opens).toEqual([[1, 0x3c]]);
      expect(Array.from(bus.writes[0] ?? [])).toEqual([CONTROL_COMMANDS, ...INIT[controller]]);
      const perScreen = controller === "ssd1306" ? 9 : 16;
      // init, two screens (the repeated idle is not redrawn), display off at close
      expect(bus.writes).toHaveLength(1 + 2 * perScreen + 1);
      expect(Array.from(bus.writes.at(-1) ?? [])).toEqual([0x00, 0xae]);
      const idleWrites = bus.writes.slice(0, 1 + perScreen);
      expect(decodeBitmap(panelPicture(controller, idleWrites))).toBe(link);
      expect(decodeBitmap(panelPicture(controller, bus.writes))).toBe(link);
      expect(d.current()?.screen.kind).toBe("pay");
      expect(
        Buffer.from(panelPicture(controller, bus.writes).pixels).equals(
          Buffer.from(d.current()?.bitmap?.pixels ?? []),
        ),
      ).toBe(true);
    });
  }

  it("the OLED's picture, enlarged as a camera sees it, decodes from its PNG file", () => {
    const bus = recordingBus();
    return (async () => {
      const d = await createDisplay({ kind: "ssd1306", bus: 1, address: 0x3c }, { openI2c: async () => bus });
      d.show(idle);
      await d.close();
      const file = join(mkdtempSync(join(tmpdir(), "vendd-oled-")), "oled.png");
      writeFileSync(file, bitmapPng(enlarged(panelPicture("ssd1306", bus.writes), 4)));
      expect(decodePng(readFileSync(file))).toBe(link);
    })();
  });

  it("never throws on a failing bus; opens it again and redraws at the next screen", async () => {
    const bus = recordingBus(1);
    let opens = 0;
    const d = await createDisplay(
      { kind: "sh1106", bus: 2, address: 0x3d },
      {
        openI2c: async () => {
          opens++;
          return bus;
        },
      },
    );
    expect(() => d.show(idle)).not.toThrow();
    d.show({ kind: "vending", amount: 100, currency: "DKK" });
    await d.close();
    expect(opens).toBe(2);
    expect(bus.closed).toBe(2);
    expect(d.current()?.screen.kind).toBe("vending");
  });
});
