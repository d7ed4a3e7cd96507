import type { Logger } from "pino";
import { unknownKind } from "../../src/core/seams.js";
import type { CheckinDisplay, DisplayKind } from "./display.js";
import type { TerminalDisplayOptions } from "./terminal.js";

/** What the display is (plain data, from src/config/seams.ts): the kind and, for a terminal, its device. */
export type DisplayOptions =
  | ({ kind: "terminal" } & Omit<TerminalDisplayOptions, "out" | "logger">)
  | { kind: "sim" }
  | { kind: "none" };

/** The display's collaborators. */
export interface DisplayDeps {
  logger?: Logger;
  /** Where a terminal display draws when it has no device (default standard output; never closed). */
  out?: NodeJS.WritableStream;
}

export const DISPLAY_KINDS: readonly DisplayKind[] = ["terminal", "sim", "none"];

/**
 * Creates the check-in display the options name. Each kind's module is imported only in its own case, so a
 * headless unit never loads qrcode-terminal.
 * @throws SeamConfigError for a kind outside `terminal | sim | none` (unchecked input).
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
    async close() {},
  };
}
