import { QUIET_MODULES, type QuietZone, qrMatrix, qrScaleFor } from "../../src/core/qr.js";
import { CELL_HEIGHT, CELL_WIDTH, GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from "./font5x7.js";
import { ellipsis, type ScreenParts, screenParts, wrap } from "./render.js";
import type { Screen } from "./screen.js";

/** A 1-bit picture: one byte per pixel, row by row, 1 = ink (dark), 0 = paper (light). */
export interface Bitmap {
  readonly width: number;
  readonly height: number;
  readonly pixels: Uint8Array;
}

export interface BitmapOptions {
  width: number;
  height: number;
  /** Decimal places of the currency's minor unit. */
  decimals: number;
  /** The QR code's quiet zone (src/core/qr.ts): `full` (4 modules, default) or `fit` (the 64-px OLED). */
  quiet?: QuietZone;
}

/** Where the QR code went and at what size (for tests, the OLED check and `vendd screen`). */
export interface QrPlacement {
  /** Modules per side (QR version v: 17 + 4v). */
  modules: number;
  /** Pixels per module. */
  scale: number;
  /** Top-left pixel of the first module (the quiet zone lies around it). */
  x: number;
  y: number;
}

export interface DrawnScreen {
  bitmap: Bitmap;
  qr: QrPlacement | null;
}

export { QUIET_MODULES, qrMatrix } from "../../src/core/qr.js";

/** The text scale of a panel: 1 below 200 px, 2 up to 299 px, and so on (a 6×8 cell times the scale). */
export function textScale(width: number, height: number): number {
  return Math.max(1, Math.floor(Math.min(width, height) / 100));
}

/**
 * Draws one screen into a `width` × `height` 1-bit bitmap. Pure: the same screen and options give the same
 * pixels.
 *
 * Layout. A screen with a QR code (idle with the check-in link, pay) puts it as large as whole pixels per
 * module allow with its quiet zone: on a wide panel (width ≥ 2 × height, the 128×64 OLED) at the left with
 * the words in a column at its right; otherwise centred between the head row above and the caption row
 * below, with the message rows in the room left over. Text is the 5×7 font (font5x7.ts) at the panel's
 * text scale, word-wrapped (at a smaller scale when that makes it fit whole); text that does not fit at 1 is cut with `…`, and never drawn over the QR code. A
 * screen without a QR code is its rows centred vertically.
 * @throws when an amount is not a valid minor-unit integer (the displays catch it and keep the last screen).
 */
export function drawScreen(screen: Screen, opts: BitmapOptions): DrawnScreen {
  const parts = screenParts(screen, opts.decimals);
  const canvas = new Canvas(opts.width, opts.height, textScale(opts.width, opts.height));
  if (parts.qr === null) {
    canvas.textBlock(rowsOf(parts), 0, 0, opts.width, opts.height, true);
    return { bitmap: canvas.bitmap(), qr: null };
  }
  const matrix = qrMatrix(parts.qr);
  const quiet = opts.quiet ?? "full";
  const qr =
    opts.width >= 2 * opts.height
      ? sideLayout(canvas, parts, matrix.size, quiet)
      : stackedLayout(canvas, parts, matrix.size, quiet);
  if (qr !== null) canvas.qr(matrix, qr);
  return { bitmap: canvas.bitmap(), qr };
}

/** Head, message paragraphs and caption as one list of paragraphs. */
function rowsOf(parts: ScreenParts): string[] {
  return [
    ...(parts.head === null ? [] : [parts.head]),
    ...parts.paragraphs,
    ...(parts.caption === null ? [] : [parts.caption]),
  ];
}

/** QR square at the left, full height; the words in the column at its right. */
function sideLayout(c: Canvas, parts: ScreenParts, modules: number, quiet: QuietZone): QrPlacement | null {
  const scale = qrScaleFor(modules, c.height, quiet);
  if (scale === 0) {
    c.textBlock(rowsOf(parts), 0, 0, c.width, c.height, true);
    return null;
  }
  const px = modules * scale;
  const margin = Math.floor((c.height - px) / 2);
  const qr = { modules, scale, x: margin, y: margin };
  const left = px + 2 * margin;
  c.textBlock(rowsOf(parts), left + 1, 0, c.width - left - 1, c.height, true);
  return qr;
}

/** Head row, QR code centred, caption row; the message in the room the QR code leaves. */
function stackedLayout(c: Canvas, parts: ScreenParts, modules: number, quiet: QuietZone): QrPlacement | null {
  const line = CELL_HEIGHT * c.scale;
  const head = parts.head === null ? [] : [parts.head];
  const caption = parts.caption === null ? [] : [parts.caption];
  const message = parts.paragraphs.flatMap((p) => wrap(p, c.columns));
  // The QR code gets all but one row each for the head, the message (if any) and the caption.
  const reserved = (head.length + Math.min(message.length, 1) + caption.length) * line;
  const scale = qrScaleFor(modules, Math.min(c.width, c.height - reserved), quiet);
  if (scale === 0) {
    c.textBlock(rowsOf(parts), 0, 0, c.width, c.height, true);
    return null;
  }
  const q = quiet === "full" ? QUIET_MODULES : 1;
  const box = (modules + 2 * q) * scale;
  const captionTop = c.height - caption.length * line;
  const textRows = Math.floor((c.height - box - caption.length * line) / line);
  const top = c.textBlock([...head, ...parts.paragraphs], 0, 0, c.width, textRows * line, false);
  const boxTop = Math.max(top, Math.floor((captionTop - box + top) / 2));
  const qr = { modules, scale, x: Math.floor((c.width - modules * scale) / 2), y: boxTop + q * scale };
  if (caption.length > 0) c.textBlock(caption, 0, captionTop, c.width, line, false);
  return qr;
}

class Canvas {
  readonly pixels: Uint8Array;
  constructor(
    readonly width: number,
    readonly height: number,
    readonly scale: number,
  ) {
    this.pixels = new Uint8Array(width * height);
  }

  /** Characters per full-width row. */
  get columns(): number {
    return Math.max(1, Math.floor(this.width / (CELL_WIDTH * this.scale)));
  }

  bitmap(): Bitmap {
    return { width: this.width, height: this.height, pixels: this.pixels };
  }

  fill(x: number, y: number, w: number, h: number): void {
    for (let yy = Math.max(0, y); yy < Math.min(this.height, y + h); yy++) {
      this.pixels.fill(1, yy * this.width + Math.max(0, x), yy * this.width + Math.min(this.width, x + w));
    }
  }

  qr(m: { size: number; dark(row: number, col: number): boolean }, at: QrPlacement): void {
    for (let r = 0; r < m.size; r++) {
      for (let col = 0; col < m.size; col++) {
        if (m.dark(r, col)) this.fill(at.x + col * at.scale, at.y + r * at.scale, at.scale, at.scale);
      }
    }
  }

  /**
   * Word-wraps the paragraphs into the box and draws them, each row centred. The text is drawn at the
   * panel's scale, or at the largest smaller scale at which it fits whole; at scale 1 rows beyond the box
   * are cut and the last one drawn ends in `…`. Returns the y below the last row drawn.
   */
  textBlock(paragraphs: string[], x: number, y: number, w: number, h: number, centre: boolean): number {
    for (let s = this.scale; s >= 1; s--) {
      const rows = this.fitRows(paragraphs, w, h, s);
      if (rows !== null && (s === 1 || !rows.cut)) return this.drawRows(rows.rows, x, y, w, h, centre, s);
    }
    return y;
  }

  private fitRows(paragraphs: string[], w: number, h: number, s: number) {
    const columns = Math.floor(w / (CELL_WIDTH * s));
    const room = Math.floor(h / (CELL_HEIGHT * s));
    if (columns < 1 || room < 1) return null;
    const rows = paragraphs.flatMap((p) => wrap(p, columns));
    if (rows.length <= room) return { rows, cut: false };
    return { rows: [...rows.slice(0, room - 1), ellipsis(rows[room - 1] ?? "", columns)], cut: true };
  }

  private drawRows(rows: string[], x: number, y: number, w: number, h: number, centre: boolean, s: number) {
    const cw = CELL_WIDTH * s;
    const line = CELL_HEIGHT * s;
    let top = centre ? y + Math.floor((h - rows.length * line) / 2) : y;
    for (const row of rows) {
      const chars = [...row];
      const left = x + Math.floor((w - chars.length * cw) / 2);
      for (const [i, ch] of chars.entries()) this.glyph(ch, left + i * cw, top, s);
      top += line;
    }
    return top;
  }

  private glyph(ch: string, x: number, y: number, s: number): void {
    const cols = glyph(ch);
    for (let c = 0; c < GLYPH_WIDTH; c++) {
      const bits = cols[c] ?? 0;
      for (let r = 0; r < GLYPH_HEIGHT; r++) if ((bits >> r) & 1) this.fill(x + c * s, y + r * s, s, s);
    }
  }
}
