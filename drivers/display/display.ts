import type { Bitmap } from "./bitmap.js";
import type { Screen } from "./screen.js";

/**
 * What the customer sees on the unit's own screen. Implementations: a terminal (qrcode-terminal on standard
 * output or a tty device such as an HDMI console), a Linux framebuffer (framebuffer.ts: SPI, DSI or HDMI
 * panels), a 128×64 I2C OLED (oled.ts: SSD1306, SH1106), and `sim`, which records screens.
 *
 * Failure semantics: `show` never throws and never blocks money: a display that cannot be written logs the
 * error once and keeps the last screen. Redraws happen only when the screen changes.
 */
export interface CheckinDisplay {
  readonly kind: DisplayKind;
  show(screen: Screen): void;
  /**
   * The screen on show now (the last one drawn) and, for a pixel display, the picture it drew; undefined
   * before the first screen. `vendd screen` reads it through the control socket.
   */
  current(): ShownScreen | undefined;
  close(): Promise<void>;
}

/** What a display shows: the screen and, for the pixel kinds, the 1-bit picture drawn for it. */
export interface ShownScreen {
  screen: Screen;
  bitmap: Bitmap | null;
}

export type DisplayKind = "terminal" | "framebuffer" | "ssd1306" | "sh1106" | "sim" | "none";

/** The check-in payload (pos-v10 §15), built in src/core/qr.ts so config validation can size its QR code. */
export { checkinUri } from "../../src/core/qr.js";
/** What a display shows, kept in screen.ts so the renderers import it without a circle through this file. */
export type { Screen } from "./screen.js";
