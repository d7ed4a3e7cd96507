import type { Logger } from "pino";
import { unknownKind } from "../../src/core/seams.js";
import type { CheckinDisplay, DisplayKind } from "./display.js";
import type { FramebufferDisplayOptions } from "./framebuffer.js";
import type { OledBus } from "./oled.js";
import type { TerminalDisplayOptions } from "./terminal.js";

/** What the display is (plain data, from src/config/seams.ts): the kind and its device. */
export type DisplayOptions =
  | ({ kind: "terminal" } & Omit<TerminalDisplayOptions, "out" | "logger">)
  | ({ kind: "framebuffer" } & Omit<FramebufferDisplayOptions, "logger">)
  | { kind: "ssd1306" | "sh1106"; bus: number; address: number; decimals?: number }
  | { kind: "sim" }
  | { kind: "none" };

/** The display's collaborators. */
export interface DisplayDeps {
  logger?: Logger;
  /** Where a terminal display draws when it has no device (default standard output; never closed). */
  out?: NodeJS.WritableStream;
  /** Opens the OLED's I2C bus (default i2c-bus on `/dev/i2c-<bus>`); tests pass a recording bus. */
  openI2c?: (bus: number, address: number) => Promise<OledBus>;
}

export const DISPLAY_KINDS: readonly DisplayKind[] = [
  "terminal",
  "framebuffer",
  "ssd1306",
  "sh1106",
  "sim",
  "none",
];

/**
 * Creates the check-in display the options name. Each kind's module is imported only in its own case, so a
 * headless unit never loads qrcode-terminal, and only an OLED unit loads the native i2c-bus (at its first
 * screen).
 * @throws SeamConfigError for a kind outside DISPLAY_KINDS (unchecked input).
 */
export async function createDisplay(
  options: DisplayOptions,
  deps: DisplayDeps = {},
): Promise<CheckinDisplay> {
  switch (options.kind) {
    case "terminal": {
      const { createTerminalDisplay } = await import("./terminal.js");
      const { kind: _kind, ...terminal } = options;
      return createTerminalDisplay({
        ...terminal,
        ...(deps.out ? { out: deps.out } : {}),
        ...(deps.logger ? { logger: deps.logger.child({ component: "display" }) } : {}),
      });
    }
    case "framebuffer": {
      const { createFramebufferDisplay } = await import("./framebuffer.js");
      const { kind: _kind, ...fb } = options;
      return createFramebufferDisplay({
        ...fb,
        ...(deps.logger ? { logger: deps.logger.child({ component: "display" }) } : {}),
      });
    }
    case "ssd1306":
    case "sh1106": {
      const { createOledDisplay, openI2cBus } = await import("./oled.js");
      const openI2c = deps.openI2c ?? openI2cBus;
      return createOledDisplay({
        controller: options.kind,
        openBus: () => openI2c(options.bus, options.address),
        ...(options.decimals === undefined ? {} : { decimals: options.decimals }),
        ...(deps.logger ? { logger: deps.logger.child({ component: "display" }) } : {}),
      });
    }
    case "sim": {
      const { createSimDisplay } = await import("./sim.js");
      return createSimDisplay();
    }
    case "none":
      return createNoDisplay();
    default:
      throw unknownKind("display", options, DISPLAY_KINDS);
  }
}

/** A unit without a screen (sticker QR code): every screen is dropped. */
function createNoDisplay(): CheckinDisplay {
  return {
    kind: "none",
    show() {},
    current: () => undefined,
    async close() {},
  };
}
