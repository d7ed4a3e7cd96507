import type { CheckinDisplay, DisplayKind } from "./display.js";
import type { TerminalDisplayOptions } from "./terminal.js";

/** Options for `createDisplay`; only the `terminal` kind reads them. */
export type DisplayOptions = TerminalDisplayOptions;

export class DisplayError extends Error {
  override readonly name = "DisplayError";
  constructor(
    readonly code: "unknownKind",
    message: string,
  ) {
    super(message);
  }
}

const KINDS: readonly DisplayKind[] = ["terminal", "sim", "none"];

/**
 * Creates the check-in display named by configuration. Each kind's module is imported only in its own
 * case, so a headless unit never loads qrcode-terminal.
 * @throws DisplayError `unknownKind` for a name outside `terminal | sim | none` (unchecked config).
 */
export async function createDisplay(kind: DisplayKind, opts: DisplayOptions = {}): Promise<CheckinDisplay> {
  switch (kind) {
    case "terminal": {
      const { createTerminalDisplay } = await import("./terminal.js");
      return createTerminalDisplay(opts);
    }
    case "sim": {
      const { createSimDisplay } = await import("./sim.js");
      return createSimDisplay();
    }
    case "none":
      return createNoDisplay();
    default:
      throw new DisplayError(
        "unknownKind",
        `unknown display kind ${JSON.stringify(String(kind))}; valid: ${KINDS.join(", ")}`,
      );
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
