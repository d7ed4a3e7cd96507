/**
 * The `display` section: the check-in display's kind, its device and geometry, and the QR URI scheme.
 * Board profiles (boards/*.json) fill it per hardware; config/README.md is the reference of every key.
 */
import * as z from "zod";
import {
  checkinUri,
  longestFitting,
  OLED_HEIGHT,
  OLED_MIN_MODULE_PX,
  OLED_WIDTH,
  qrMatrix,
  qrScaleFor,
} from "../core/qr.js";
import { ALWAYS, type CrossIssue, crossCheck, intIn, isRecord, nonEmpty } from "./rules.js";

export const DISPLAY_KIND_NAMES = ["terminal", "framebuffer", "ssd1306", "sh1106", "sim", "none"] as const;

/** Pixel formats the framebuffer display writes: RGB565 and XRGB8888. */
export const FRAMEBUFFER_BPP = [16, 32] as const;

/** A framebuffer geometry override: null = what the device reports in sysfs. */
const pixels = () => intIn(8, 8192).nullable().default(null);

export const displaySchema = z
  .strictObject({
    kind: z.enum(DISPLAY_KIND_NAMES).default("terminal"),
    /**
     * terminal: null = standard output, otherwise a tty path such as /dev/tty1. framebuffer: the device,
     * such as /dev/fb1 (required).
     */
    device: nonEmpty(4096).nullable().default(null),
    /** QR URI scheme, `{scheme}://pos?id={beaconId}&source=qr` (pos-v10.md §15). */
    scheme: z
      .string()
      .regex(/^[a-z][a-z0-9+.-]*$/, "must be a lowercase URI scheme such as servicepos")
      .default("servicepos"),
    /** framebuffer: visible width in pixels; null = sysfs `virtual_size`. */
    width: pixels(),
    /** framebuffer: visible height in pixels; null = sysfs `virtual_size`. */
    height: pixels(),
    /** framebuffer: 16 (RGB565) or 32 (XRGB8888); null = sysfs `bits_per_pixel`. */
    bitsPerPixel: z
      .number()
      .refine((v) => FRAMEBUFFER_BPP.some((b) => b === v), "must be 16 (RGB565) or 32 (XRGB8888)")
      .nullable()
      .default(null),
    /** framebuffer: bytes per line; null = sysfs `stride` (else width × bytes per pixel). */
    stride: intIn(16, 65_536).nullable().default(null),
    /** framebuffer: the device's sysfs directory; null = /sys/class/graphics/<name of device>. */
    sysfs: nonEmpty(4096).nullable().default(null),
    /** ssd1306, sh1106: the I2C bus number (/dev/i2c-N) and the 7-bit address (0x3c = 60, 0x3d = 61). */
    i2c: z
      .strictObject({
        bus: intIn(0, 255).default(1),
        address: intIn(0x03, 0x77).default(0x3c),
      })
      .prefault({}),
  })
  .superRefine(
    crossCheck((d) =>
      d.kind === "framebuffer" && (d.device === null || d.device === undefined)
        ? [{ path: ["device"], message: "required when display.kind is framebuffer (such as /dev/fb1)" }]
        : [],
    ),
    ALWAYS,
  )
  .prefault({});

/**
 * A unit with an I2C OLED must be able to show its check-in link at 2 pixels per module or more on 64 px;
 * otherwise the issue names the link's length and the longest that fits. `beaconId` is the configured
 * beaconId (null: none configured yet, nothing to check).
 */
export function displayIssues(display: unknown, beaconId: unknown): CrossIssue[] {
  if (!isRecord(display) || (display.kind !== "ssd1306" && display.kind !== "sh1106")) return [];
  if (typeof beaconId !== "string" || beaconId === "") return [];
  const scheme = typeof display.scheme === "string" ? display.scheme : "servicepos";
  const link = checkinUri(scheme, beaconId);
  const modules = qrMatrix(link).size;
  const scale = qrScaleFor(modules, OLED_HEIGHT, "fit");
  if (scale >= OLED_MIN_MODULE_PX) return [];
  const longest = longestFitting(OLED_HEIGHT, OLED_MIN_MODULE_PX, "fit");
  return [
    {
      path: ["display", "kind"],
      message:
        `the check-in link (${link.length} characters, QR ${modules}×${modules} modules) does not fit the ` +
        `${OLED_WIDTH}×${OLED_HEIGHT} OLED at ${OLED_MIN_MODULE_PX} pixels per module, which a phone needs; ` +
        `the longest link that fits is ${longest} characters: use a shorter display.scheme or beaconId, or ` +
        "a larger screen (display.kind framebuffer)",
    },
  ];
}
