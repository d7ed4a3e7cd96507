/** A recording I2C bus and a model of the OLED controllers' RAM, to read back what a panel would show. */
import type { Bitmap } from "./bitmap.js";
import type { OledBus, OledController } from "./oled.js";

export interface RecordingBus extends OledBus {
  readonly writes: Uint8Array[];
  opened: number;
  closed: number;
}

/** Records every write transaction; `failWrites` makes the next N writes fail (a loose cable). */
export function recordingBus(failWrites = 0): RecordingBus & { failWrites: number } {
  const bus = {
    writes: [] as Uint8Array[],
    opened: 1,
    closed: 0,
    failWrites,
    async write(bytes: Uint8Array) {
      if (bus.failWrites > 0) {
        bus.failWrites--;
        throw Object.assign(new Error("EREMOTEIO"), { code: "EREMOTEIO" });
      }
      bus.writes.push(Uint8Array.from(bytes));
    },
    async close() {
      bus.closed++;
    },
  };
  return bus;
}

/**
 * Plays the writes into a model of the controller's display RAM (SSD1306: horizontal addressing within the
 * column/page window of 0x21/0x22; SH1106: page 0xB0-0xB7 and column nibbles 0x0X/0x1X, 132-column RAM
 * of which columns 2-129 are visible) and returns the visible 128×64 picture, lit pixels as paper (0).
 */
export function panelPicture(controller: OledController, writes: readonly Uint8Array[]): Bitmap {
  const ramWidth = controller === "sh1106" ? 132 : 128;
  const ram = new Uint8Array(ramWidth * 8);
  let col = 0;
  let page = 0;
  let window = { c0: 0, c1: 127, p0: 0, p1: 7 };
  for (const w of writes) {
    const control = w[0];
    const body = Array.from(w.subarray(1));
    if (control === 0x00) {
      for (let i = 0; i < body.length; i++) {
        const cmd = body[i] ?? 0;
        if (controller === "ssd1306" && cmd === 0x21) {
          window = { ...window, c0: body[i + 1] ?? 0, c1: body[i + 2] ?? 0 };
          col = window.c0;
          i += 2;
        } else if (controller === "ssd1306" && cmd === 0x22) {
          window = { ...window, p0: body[i + 1] ?? 0, p1: body[i + 2] ?? 0 };
          page = window.p0;
          i += 2;
        } else if (controller === "sh1106" && cmd >= 0xb0 && cmd <= 0xb7) page = cmd & 7;
        else if (controller === "sh1106" && cmd <= 0x0f) col = (col & 0xf0) | cmd;
        else if (controller === "sh1106" && cmd >= 0x10 && cmd <= 0x1f)
          col = (col & 0x0f) | ((cmd & 0x0f) << 4);
        else if ([0xd5, 0xa8, 0xd3, 0x8d, 0x20, 0xda, 0x81, 0xd9, 0xdb, 0xad].includes(cmd)) i += 1;
      }
    } else if (control === 0x40) {
      for (const byte of body) {
        ram[page * ramWidth + col] = byte;
        if (controller === "ssd1306") {
          col++;
          if (col > window.c1) {
            col = window.c0;
            page = page >= window.p1 ? window.p0 : page + 1;
          }
        } else col = Math.min(col + 1, ramWidth - 1);
      }
    }
  }
  const offset = controller === "sh1106" ? 2 : 0;
  const pixels = new Uint8Array(128 * 64);
  for (let y = 0; y < 64; y++)
    for (let x = 0; x < 128; x++) {
      const lit = ((ram[(y >> 3) * ramWidth + x + offset] ?? 0) >> (y & 7)) & 1;
      pixels[y * 128 + x] = lit ? 0 : 1;
    }
  return { width: 128, height: 64, pixels };
}
