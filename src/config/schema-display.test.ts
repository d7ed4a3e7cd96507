/** The `display` section: the pixel kinds' keys, and the OLED's check that the check-in link fits. */
import { describe, expect, it } from "vitest";
import { issuesOf, pathsOf, rawLegacy, rawV10, V10_ENV } from "./fixtures.test-support.js";
import { parseConfig } from "./load.js";
import { displayOptions } from "./seams.js";

const withV10 = (display: Record<string, unknown>, beaconId: string | null = null) => {
  const raw = rawV10();
  const v10 = raw.payment.v10 as Record<string, unknown>;
  return { ...raw, payment: { ...raw.payment, v10: { ...v10, beaconId } }, display };
};

describe("display", () => {
  it("maps a framebuffer with sysfs geometry and one with every override", () => {
    const fb = parseConfig(withV10({ kind: "framebuffer", device: "/dev/fb1" }), undefined, V10_ENV).config;
    expect(displayOptions(fb)).toEqual({
      kind: "framebuffer",
      device: "/dev/fb1",
      sysfs: null,
      width: null,
      height: null,
      bitsPerPixel: null,
      stride: null,
      decimals: 2,
    });
    const all = {
      kind: "framebuffer",
      device: "/dev/fb0",
      width: 320,
      height: 240,
      bitsPerPixel: 32,
      stride: 1280,
    };
    expect(displayOptions(parseConfig(withV10(all), undefined, V10_ENV).config)).toMatchObject(all);
  });

  it("lists every framebuffer error at once: no device, a pixel format it cannot draw, a bad size", () => {
    const issues = issuesOf(withV10({ kind: "framebuffer", bitsPerPixel: 24, width: 0, stride: "wide" }));
    expect(pathsOf(issues).sort()).toEqual([
      "display.bitsPerPixel",
      "display.device",
      "display.stride",
      "display.width",
    ]);
    expect(issues.find((i) => i.path === "display.bitsPerPixel")?.message).toBe(
      "must be 16 (RGB565) or 32 (XRGB8888)",
    );
    expect(issues.find((i) => i.path === "display.device")?.message).toBe(
      "required when display.kind is framebuffer (such as /dev/fb1)",
    );
  });

  it("maps an OLED's bus and address", () => {
    const c = parseConfig(
      withV10({ kind: "sh1106", i2c: { bus: 3, address: 61 } }),
      undefined,
      V10_ENV,
    ).config;
    expect(displayOptions(c)).toEqual({ kind: "sh1106", bus: 3, address: 61, decimals: 2 });
    expect(issuesOf(withV10({ kind: "ssd1306", i2c: { address: 200 } })).map((i) => i.path)).toEqual([
      "display.i2c.address",
    ]);
  });

  it("accepts an OLED whose check-in link fits at 2 pixels per module (15-digit beaconId)", () => {
    const c = parseConfig(withV10({ kind: "ssd1306" }, "123456789012345"), undefined, V10_ENV).config;
    expect(c.display.kind).toBe("ssd1306");
    // The older interface's PoSUnitId is the beaconId it shows.
    expect(
      parseConfig({ ...rawLegacy(), display: { kind: "sh1106" } }, undefined, {
        VENDD_LEGACY_API_KEY: "k",
        VENDD_LEGACY_MERCHANT_KEY: "m",
      }).config.display.kind,
    ).toBe("sh1106");
  });

  it("refuses an OLED whose check-in link does not fit, naming its length and the longest that fits", () => {
    const issues = issuesOf(withV10({ kind: "ssd1306" }, "CD851CD7-8398-4A03-83C1-391A2F5CB71C"));
    expect(issues).toEqual([
      {
        path: "display.kind",
        message:
          "the check-in link (66 characters, QR 33×33 modules) does not fit the 128×64 OLED at 2 pixels per " +
          "module, which a phone needs; the longest link that fits is 53 characters: use a shorter " +
          "display.scheme or beaconId, or a larger screen (display.kind framebuffer)",
      },
    ]);
    // A long scheme pushes even a 15-digit link over.
    const long = issuesOf(
      withV10({ kind: "sh1106", scheme: "averyveryverylongschemename" }, "123456789012345"),
    );
    expect(long[0]?.message).toContain("the check-in link (62 characters, QR 33×33 modules)");
    // The same link on a framebuffer is fine.
    const fb = withV10({ kind: "framebuffer", device: "/dev/fb1" }, "CD851CD7-8398-4A03-83C1-391A2F5CB71C");
    expect(parseConfig(fb, undefined, V10_ENV).config.display.kind).toBe("framebuffer");
  });
});
