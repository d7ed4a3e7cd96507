/**
 * `screen` on the control socket (issue 46): what the check-in display shows now, as text and as a PNG, so
 * a technician (`vendd screen`, the console's `screen`) or the fleet can see the screen remotely. The
 * display keeps its last drawn screen (CheckinDisplay.current); a pixel display gives the picture it drew,
 * any other kind the same screen drawn at 240×240 for the PNG.
 */
import { drawScreen } from "../../drivers/display/bitmap.js";
import { bitmapPng } from "../../drivers/display/png.js";
import { renderScreen } from "../../drivers/display/render.js";
import { CURRENCY_DECIMALS } from "../config/schema.js";
import type { ScreenAnswer } from "../core/controlScreen.js";
import type { ConsoleUnit } from "./consoleUnit.js";
import type { CommandSpec } from "./control.js";

/** The picture's size for a display without pixels (terminal, sim): a common SPI panel's. */
const TEXT_DISPLAY_PICTURE = 240;

export function screenCommand(u: Pick<ConsoleUnit, "display">): CommandSpec {
  return {
    public: true,
    run: (): ScreenAnswer => {
      const display = u.display;
      const shown = display?.current();
      if (display === undefined || shown === undefined) {
        return { display: display?.kind ?? "none", screen: null, text: [], width: 0, height: 0, png: null };
      }
      const text = renderScreen(shown.screen, {
        width: 40,
        height: 20,
        decimals: CURRENCY_DECIMALS,
        qr: (link) => [`[QR code: ${link}]`],
      });
      const bitmap =
        shown.bitmap ??
        drawScreen(shown.screen, {
          width: TEXT_DISPLAY_PICTURE,
          height: TEXT_DISPLAY_PICTURE,
          decimals: CURRENCY_DECIMALS,
        }).bitmap;
      return {
        display: display.kind,
        screen: shown.screen.kind,
        text,
        width: bitmap.width,
        height: bitmap.height,
        png: bitmapPng(bitmap).toString("base64"),
      };
    },
  };
}
