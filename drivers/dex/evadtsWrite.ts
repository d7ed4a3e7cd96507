/**
 * Writes an EVA-DTS file around data segments (dex.md §5): DXS, ST, the segments, G85 (CRC-16/ARC over
 * ST..the line before G85, CR LF joined, MSB first) and SE (segment count ST..SE inclusive), DXE.
 * Used by the VMC-side simulator and by tests; the unit itself never writes audit files.
 */
import { crc16Text } from "./crc16.js";

/** Escapes a `*` inside a text element (`^2A^`). */
export function escapeElement(text: string): string {
  return text.replace(/\*/g, "^2A^");
}

/** One segment line from its id and elements; trailing empty elements are dropped. */
export function segment(id: string, ...elements: (string | number | null | undefined)[]): string {
  const els = elements.map((e) => (e === null || e === undefined ? "" : escapeElement(String(e))));
  while (els.length > 0 && els[els.length - 1] === "") els.pop();
  return [id, ...els].join("*");
}

export interface EnvelopeOptions {
  commId: string;
  /** Leave G85 out (some machines do). */
  noG85?: boolean;
}

/** The whole file, lines ended CR LF. */
export function writeEvaDts(dataLines: readonly string[], opts: EnvelopeOptions): string {
  const body = ["ST*001*0001", ...dataLines];
  const lines = [`DXS*${opts.commId}*VA*V0/6*1`, ...body];
  if (!opts.noG85) {
    const crc = crc16Text(body.map((l) => `${l}\r\n`).join(""));
    lines.push(`G85*${crc.toString(16).toUpperCase().padStart(4, "0")}`);
  }
  const count = body.length + (opts.noG85 ? 0 : 1) + 1;
  lines.push(`SE*${count}*0001`, "DXE*1*1");
  return lines.map((l) => `${l}\r\n`).join("");
}
