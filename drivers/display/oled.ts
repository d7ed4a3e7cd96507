import type { Logger } from "pino";
import { OLED_HEIGHT, OLED_WIDTH } from "../../src/core/qr.js";
import { type Bitmap, drawScreen } from "./bitmap.js";
import type { CheckinDisplay, Screen, ShownScreen } from "./display.js";
import { sameScreen } from "./render.js";

/** The two controllers of 128×64 I2C OLED modules. */
export type OledController = "ssd1306" | "sh1106";

/** One device on an I2C bus: each `write` is one I2C write transaction to its address. */
export interface OledBus {
  write(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export interface OledDisplayOptions {
  controller: OledController;
  /** Opens the bus to the panel (production: i2c-bus, `openI2cBus`; tests: a recording bus). */
  openBus: () => Promise<OledBus>;
  /** Decimal places of the currency's minor unit (default 2). */
  decimals?: number;
  logger?: Logger;
}

/** Control bytes (SSD1306 datasheet §8.1.5.2, SH1106 §"I2C-bus interface"): what follows is commands / data. */
export const CONTROL_COMMANDS = 0x00;
export const CONTROL_DATA = 0x40;

/**
 * The initialisation sequences for a 128×64 panel with the usual module wiring (alternative COM pins,
 * segment remap and COM scan reversed so that (0,0) is the top left), each command from the datasheets'
 * command tables.
 */
export const INIT: Readonly<Record<OledController, readonly number[]>> = {
  ssd1306: [
    0xae, // display off
    0xd5,
    0x80, // clock divide ratio / oscillator frequency (reset value)
    0xa8,
    0x3f, // multiplex ratio: 64 rows
    0xd3,
    0x00, // display offset 0
    0x40, // display start line 0
    0x8d,
    0x14, // charge pump on (internal VCC)
    0x20,
    0x00, // memory addressing mode: horizontal
    0xa1, // segment remap: column 127 is SEG0
    0xc8, // COM output scan direction: remapped
    0xda,
    0x12, // COM pins: alternative configuration
    0x81,
    0xcf, // contrast
    0xd9,
    0xf1, // pre-charge period
    0xdb,
    0x40, // VCOMH deselect level
    0xa4, // display follows RAM
    0xa6, // normal (not inverted)
    0x2e, // scrolling off
    0xaf, // display on
  ],
  sh1106: [
    0xae, // display off
    0xd5,
    0x80, // clock divide ratio / oscillator frequency
    0xa8,
    0x3f, // multiplex ratio: 64 rows
    0xd3,
    0x00, // display offset 0
    0x40, // display start line 0
    0xad,
    0x8b, // DC-DC converter on
    0xa1, // segment remap
    0xc8, // COM output scan direction: remapped
    0xda,
    0x12, // COM pins: alternative configuration
    0x81,
    0x80, // contrast
    0xd9,
    0x22, // pre-charge period (reset value)
    0xdb,
    0x35, // VCOM deselect level (reset value)
    0xa4, // display follows RAM
    0xa6, // normal (not inverted)
    0xaf, // display on
  ],
};

/** The SH1106's RAM is 132 columns wide; a 128-column panel shows columns 2 to 129. */
const SH1106_COLUMN_OFFSET = 2;
const PAGES = OLED_HEIGHT / 8;

/**
 * The panel's RAM for a bitmap, page by page: byte `page * 128 + x` holds the pixels (x, 8·page … 8·page+7),
 * bit 0 at the top. A set bit lights the pixel; paper is lit and ink is dark, so the QR code's dark
 * modules are dark on a lit background, as a phone expects.
 */
export function oledPages(bitmap: Bitmap): Uint8Array {
  const ram = new Uint8Array(OLED_WIDTH * PAGES);
  for (let page = 0; page < PAGES; page++) {
    for (let x = 0; x < OLED_WIDTH; x++) {
      let byte = 0;
      for (let bit = 0; bit < 8; bit++) {
        const y = page * 8 + bit;
        if (bitmap.pixels[y * bitmap.width + x] !== 1) byte |= 1 << bit;
      }
      ram[page * OLED_WIDTH + x] = byte;
    }
  }
  return ram;
}

/**
 * The I2C writes that put `ram` on the panel, one page at a time: SSD1306 sets the column (0-127) and page
 * (0-7) window once, then writes each page's 128 bytes (horizontal addressing); SH1106 has no such mode and
 * gets the page address and the column (offset 2) before each page.
 */
export function pageWrites(controller: OledController, ram: Uint8Array): Uint8Array[] {
  const writes: Uint8Array[] = [];
  if (controller === "ssd1306") {
    writes.push(Uint8Array.of(CONTROL_COMMANDS, 0x21, 0, OLED_WIDTH - 1, 0x22, 0, PAGES - 1));
  }
  for (let page = 0; page < PAGES; page++) {
    if (controller === "sh1106") {
      const col = SH1106_COLUMN_OFFSET;
      writes.push(Uint8Array.of(CONTROL_COMMANDS, 0xb0 | page, col & 0x0f, 0x10 | (col >> 4)));
    }
    const data = new Uint8Array(OLED_WIDTH + 1);
    data[0] = CONTROL_DATA;
    data.set(ram.subarray(page * OLED_WIDTH, (page + 1) * OLED_WIDTH), 1);
    writes.push(data);
  }
  return writes;
}

/**
 * A check-in display on a 128×64 I2C OLED (SSD1306 or SH1106) in one colour: each screen drawn by
 * bitmap.ts with the QR code beside the words (2 pixels per module for a check-in link of up to 53
 * characters; config validation refuses longer links, src/config/schema-display.ts), sent page by page.
 * The bus is opened and the panel initialised at the first screen; writes go out one after another.
 *
 * Failure semantics (display.ts): `show` never throws. A bus that cannot be opened or a failed write is
 * logged once (until the next good draw); the bus is opened and the panel initialised again at the next
 * screen. `close()` waits for the writes in flight, turns the panel off and closes the bus.
 */
export function createOledDisplay(opts: OledDisplayOptions): CheckinDisplay {
  const decimals = opts.decimals ?? 2;
  let failing = false;
  const fail = (err: unknown, what: string) => {
    if (failing) return;
    failing = true;
    opts.logger?.error({ err }, `display: ${what}`);
  };
  let bus: OledBus | null = null;
  let queue: Promise<void> = Promise.resolve();
  let requested: Screen | undefined;
  let shown: ShownScreen | undefined;
  let closed = false;

  const draw = async (screen: Screen, bitmap: Bitmap) => {
    try {
      let open = bus;
      if (open === null) {
        open = await opts.openBus();
        bus = open;
        await open.write(Uint8Array.of(CONTROL_COMMANDS, ...INIT[opts.controller]));
      }
      for (const w of pageWrites(opts.controller, oledPages(bitmap))) await open.write(w);
      failing = false;
      shown = { screen, bitmap };
    } catch (err) {
      fail(err, `the ${opts.controller} OLED did not take the ${screen.kind} screen`);
      const broken = bus;
      bus = null;
      requested = undefined; // the same screen is tried again
      await broken?.close().catch(() => {});
    }
  };

  return {
    kind: opts.controller,
    show(screen: Screen): void {
      if (closed || sameScreen(requested, screen)) return;
      let bitmap: Bitmap;
      try {
        bitmap = drawScreen(screen, {
          width: OLED_WIDTH,
          height: OLED_HEIGHT,
          decimals,
          quiet: "fit",
        }).bitmap;
      } catch (err) {
        fail(err, `cannot render the ${screen.kind} screen`);
        return;
      }
      requested = screen;
      queue = queue.then(() => draw(screen, bitmap));
    },
    current: () => shown,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await queue;
      const open = bus;
      bus = null;
      if (open === null) return;
      await open.write(Uint8Array.of(CONTROL_COMMANDS, 0xae)).catch(() => {});
      await open.close().catch(() => {});
    },
  };
}

/**
 * Opens `/dev/i2c-<bus>` through i2c-bus (an optional native dependency, imported here only) and binds it
 * to the panel's address.
 * @throws Error naming the module when i2c-bus is not installed (`npm install i2c-bus` on the unit).
 */
export async function openI2cBus(busNumber: number, address: number): Promise<OledBus> {
  const specifier: string = "i2c-bus";
  let mod: unknown;
  try {
    mod = await import(specifier);
  } catch (err) {
    throw new Error(
      `module i2c-bus not available (${err instanceof Error ? err.message : String(err)}): install it on the unit with npm install i2c-bus`,
    );
  }
  const open = openerOf(mod);
  if (open === null) throw new Error("module i2c-bus has no openPromisified");
  const bus = await open(busNumber);
  return {
    async write(bytes) {
      const buffer = Buffer.from(bytes);
      await bus.i2cWrite(address, buffer.length, buffer);
    },
    close: () => bus.close(),
  };
}

interface PromisifiedBus {
  i2cWrite(address: number, length: number, buffer: Buffer): Promise<unknown>;
  close(): Promise<void>;
}

function openerOf(mod: unknown): ((bus: number) => Promise<PromisifiedBus>) | null {
  const ns = typeof mod === "object" && mod !== null ? (mod as Record<string, unknown>) : {};
  const cjs =
    typeof ns.default === "object" && ns.default !== null ? (ns.default as Record<string, unknown>) : ns;
  const open = cjs.openPromisified ?? ns.openPromisified;
  return typeof open === "function" ? (open as (bus: number) => Promise<PromisifiedBus>) : null;
}
