import { formatAmount, type Minor } from "../../src/core/money.js";
import type { Screen } from "./screen.js";

/** Draws `text` as a QR code, one string per text row. */
export type QrRenderer = (text: string) => string[];

export interface RenderOptions {
  /** Screen width in character cells (default 40). Text is wrapped to it; a QR code is never cut. */
  width: number;
  /** Screen height in text rows (default 20). Text is shortened to fit; a QR code is never cut. */
  height: number;
  /** Decimal places used to format amounts (default 2: DKK and EUR). */
  decimals: number;
  qr: QrRenderer;
}

/**
 * Renders one screen as text rows. Pure: the same screen and options give the same rows.
 *
 * Every word on it is for the customer (or the technician reading an out-of-service reason), never an
 * internal state name. Layout: row 1 says what to do or what happens, with the amount where there is
 * one (`Pay 12.50 DKK (item 12)`); then the message rows; then the QR code of the check-in URI
 * (pos-v10 §15) when the screen carries one; then a call to action. Text rows are wrapped at `width` and
 * the message is shortened (ending in `…`) so that the whole screen fits `height`. The QR code is drawn
 * whole even when it alone is taller than `height`: a cut QR code cannot be scanned, an overflowing one
 * scrolls. With qrcode-terminal's small mode a 45-character URI (15-digit beaconId) needs 16 rows x 31
 * columns and a 66-character URI (GUID beaconId) 18 rows x 35 columns, so both fit a 40x20 screen with
 * the header and one line of text; URIs longer than 78 characters need QR version 5 (20 rows x 39
 * columns) and overflow a 20-row screen.
 */
export function renderScreen(screen: Screen, opts: RenderOptions): string[] {
  const p = screenParts(screen, opts.decimals);
  return compose(opts, p.head, p.paragraphs, p.qr, p.caption);
}

/** A screen's words and QR payload, shared by the text (renderScreen) and the pixel (bitmap.ts) layouts. */
export interface ScreenParts {
  /** Row 1: what to do or what happens, with the amount where there is one. */
  head: string | null;
  /** Message paragraphs, shortened to fit. */
  paragraphs: string[];
  /** The text of the QR code (the check-in URI, pos-v10 §15), or null. */
  qr: string | null;
  /** The call to action under the QR code (only with a QR code). */
  caption: string | null;
}

/**
 * The words of one screen in customer language (never an internal state name).
 * @throws when an amount is not a valid minor-unit integer (formatAmount).
 */
export function screenParts(screen: Screen, decimals: number): ScreenParts {
  const money = (amount: Minor, currency: string) => `${formatAmount(amount, decimals)} ${currency}`;
  const parts = (
    head: string | null,
    paragraphs: string[],
    qr: string | null = null,
    caption: string | null = null,
  ) => ({
    head,
    paragraphs,
    qr,
    caption: qr === null ? null : caption,
  });
  switch (screen.kind) {
    case "idle":
      return parts(null, [screen.message], screen.checkinUri, "Scan to check in");
    case "connecting":
      return parts(payHead(screen, money), ["Getting your payment ready, one moment"]);
    case "pay":
      return parts(payHead(screen, money), [], screen.checkinUri, "Scan with the app to pay");
    case "approveInApp":
      return parts("Approve in the app", [money(screen.amount, screen.currency)]);
    case "vending":
      return parts("Vending, please wait", [money(screen.amount, screen.currency)]);
    case "session":
      return parts(`${money(screen.available, screen.currency)} available`, [
        "Choose your products on the machine",
      ]);
    case "thankYou":
      return parts("Thank you!", [`Paid ${money(screen.amount, screen.currency)}`]);
    case "cancelled":
      return parts("Payment cancelled", [screen.reason]);
    case "outOfService":
      return parts("Out of service", [screen.reason]);
  }
}

function payHead(
  s: { amount: Minor; currency: string; item: number | null },
  money: (amount: Minor, currency: string) => string,
): string {
  return `Pay ${money(s.amount, s.currency)}${s.item === null ? "" : ` (item ${s.item})`}`;
}

/** Header (one row, if any), message paragraphs, optional QR and its caption, fitted (QR never cut). */
function compose(
  opts: RenderOptions,
  head: string | null,
  paragraphs: string[],
  qrText: string | null = null,
  caption: string | null = null,
): string[] {
  const qrRows = qrText === null ? [] : opts.qr(qrText);
  const tail = qrText === null || caption === null ? [] : wrap(caption, opts.width).slice(0, 1);
  const headRows = head === null ? [] : wrap(head, opts.width).slice(0, 1);
  const room = Math.max(1, opts.height - headRows.length - qrRows.length - tail.length);
  const body = paragraphs.flatMap((p) => wrap(p, opts.width));
  const fitted =
    body.length <= room ? body : [...body.slice(0, room - 1), ellipsis(body[room - 1] ?? "", opts.width)];
  const rows = [...headRows, ...fitted, ...qrRows, ...tail];
  return rows.length > opts.height && tail.length > 0 ? rows.slice(0, -1) : rows;
}

/** `row` ending in `…`, cut so that it stays within `width` characters. */
export function ellipsis(row: string, width: number): string {
  const chars = [...row];
  return chars.length < width ? `${row}…` : `${chars.slice(0, width - 1).join("")}…`;
}

/** Word-wraps `text` at `width` cells; words longer than a row are split. Empty text gives no rows. */
export function wrap(text: string, width: number): string[] {
  const rows: string[] = [];
  let row = "";
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    let rest = [...word];
    if (row.length > 0 && [...row].length + 1 + rest.length <= width) {
      row = `${row} ${word}`;
      continue;
    }
    if (row.length > 0) rows.push(row);
    row = "";
    while (rest.length > width) {
      rows.push(rest.slice(0, width).join(""));
      rest = rest.slice(width);
    }
    row = rest.join("");
  }
  if (row.length > 0) rows.push(row);
  return rows;
}

/** Structural equality of two screens (plain data: strings, numbers, null). */
export function sameScreen(a: Screen | undefined, b: Screen): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  const ra: Record<string, unknown> = a;
  const rb: Record<string, unknown> = b;
  const keys = Object.keys(ra);
  return keys.length === Object.keys(rb).length && keys.every((k) => k in rb && Object.is(ra[k], rb[k]));
}
