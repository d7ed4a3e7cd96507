/**
 * The check-in QR code's payload and size: what the pixel displays draw (drivers/display/bitmap.ts) and
 * what config validation checks fits a 64-px OLED (src/config/schema-display.ts). The matrix comes from the
 * kept library `qrcode`, never by hand.
 */
import QRCode from "qrcode";

/** The check-in payload (pos-v10 §15): all lowercase, carries the beaconId, never the posId. */
export function checkinUri(scheme: string, beaconId: string): string {
  return `${scheme}://pos?id=${beaconId}&source=qr`.toLowerCase();
}

/** Error correction of every drawn QR code: L, like the terminal's (a screen is not a damaged sticker). */
export const QR_ERROR_LEVEL = "L";
/** The standard quiet zone, modules (ISO/IEC 18004 §6.3.8). */
export const QUIET_MODULES = 4;
/** The I2C OLEDs' panel: 128 × 64 pixels (SSD1306 and SH1106 datasheets). */
export const OLED_WIDTH = 128;
export const OLED_HEIGHT = 64;

/** The fewest pixels per module a 64-px OLED may draw the check-in code at and still be read by a phone. */
export const OLED_MIN_MODULE_PX = 2;

/**
 * How much quiet zone a layout keeps: `full` the standard 4 modules; `fit` (the 64-px OLED) at least 1
 * module, the rest of the room going to bigger modules, because a check-in link needs QR version 3
 * (29 modules) and 29 × 2 px + 2 × 4 × 2 px does not fit 64 px.
 */
export type QuietZone = "full" | "fit";

export interface QrMatrix {
  /** Modules per side (QR version v: 17 + 4v). */
  size: number;
  dark(row: number, col: number): boolean;
}

/** The QR matrix of `text` at error level L. */
export function qrMatrix(text: string): QrMatrix {
  const m = QRCode.create(text, { errorCorrectionLevel: QR_ERROR_LEVEL }).modules;
  return { size: m.size, dark: (r, c) => m.get(r, c) === 1 };
}

/**
 * The largest whole pixels per module at which a `modules`-wide QR code and its quiet zone fit a `side`-px
 * square; 0 when it does not fit at 1 px.
 */
export function qrScaleFor(modules: number, side: number, quiet: QuietZone = "full"): number {
  const q = quiet === "full" ? QUIET_MODULES : 1;
  return Math.max(0, Math.floor(side / (modules + 2 * q)));
}

/**
 * The longest text of letters (QR byte mode; a link whose digits the encoder packs in numeric mode may be a
 * little longer) whose code fits a `side`-px square at
 * `minScale` pixels per module or more; 0 when none does.
 */
export function longestFitting(side: number, minScale: number, quiet: QuietZone): number {
  const fits = (n: number) => qrScaleFor(qrMatrix("a".repeat(n)).size, side, quiet) >= minScale;
  if (!fits(1)) return 0;
  let lo = 1;
  let hi = 2953; // the byte capacity of QR version 40 at level L
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
