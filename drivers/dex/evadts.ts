/**
 * The EVA-DTS audit file parser (dex.md §5–§7): pure, never throws on content. It splits the text into
 * segments (CR LF or LF), checks the envelope (G85 CRC and the SE count, both warnings only), reads the
 * segments it knows and keeps every segment raw. A file past `maxBytes` is parsed up to the limit with a
 * warning, so memory stays bounded whatever a machine (or a fuzzer) sends.
 */
import { crc16Text } from "./crc16.js";
import { Elements } from "./evadtsFields.js";
import { applySegment, emptyReport, type SegmentState } from "./evadtsSegments.js";
import type { EnvelopeCheck, EvaDtsReport } from "./evadtsTypes.js";

export { toMinor } from "./evadtsFields.js";
export type * from "./evadtsTypes.js";

/** Real files are 0.2–8 KB; 256 KiB is far beyond any machine and still small. */
export const MAX_FILE_BYTES = 256 * 1024;
/** The longest segment read; the spec's longest element is 100 characters. */
export const MAX_LINE_CHARS = 2048;
export const MAX_WARNINGS = 50;

export interface ParseOptions {
  maxBytes?: number;
}

const SEGMENT_ID = /^[A-Z][A-Z0-9]{1,3}$/;

/** Splits one line into its id and trimmed elements; `^2A^` is a `*` inside text. */
function split(line: string): { id: string; elements: string[] } {
  const parts = line.split("*").map((p) => p.trim().replace(/\^2A\^/g, "*"));
  return { id: parts[0] ?? "", elements: parts.slice(1) };
}

/** Tracks one ST..SE transmission set for the G85 and SE checks. */
class EnvelopeTracker {
  private crc: number | null = null;
  private counted = 0;
  private lists = 0;
  private computed: number | null = null;
  private first: EnvelopeCheck | null = null;

  constructor(private readonly warn: (m: string) => void) {}

  line(raw: string, id: string, elements: string[]): void {
    if (id === "ST") {
      this.crc = 0;
      this.counted = 0;
      this.lists = 0;
      this.computed = null;
    }
    if (this.crc === null) return;
    this.counted++;
    if (id === "LS" || id === "LE") this.lists++;
    if (id === "G85") {
      this.computed = this.crc;
      this.g85(elements[0] ?? "");
    } else if (this.computed === null) this.crc = crc16Text(`${raw}\r\n`, this.crc);
    if (id === "SE") this.close(elements[0] ?? "");
  }

  private g85Result: EnvelopeCheck["g85"] = "absent";

  private g85(sent: string): void {
    const c = this.crc ?? 0;
    const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, "0");
    const swapped = ((c & 0xff) << 8) | (c >>> 8);
    const s = sent.toUpperCase();
    this.g85Result = s === hex(c) ? "ok" : s === hex(swapped) ? "swapped" : "bad";
    if (this.g85Result === "bad") this.warn(`G85 is ${s || "empty"}, the file's CRC is ${hex(c)}`);
  }

  private close(sent: string): void {
    const declared = /^\d{1,9}$/.test(sent) ? Number(sent) : null;
    const check: EnvelopeCheck = {
      g85: this.g85Result,
      g85Computed: this.computed === null ? null : this.computed.toString(16).toUpperCase().padStart(4, "0"),
      seDeclared: declared,
      seCounted: this.counted,
      seCountedWithoutLists: this.counted - this.lists,
    };
    if (declared !== null && declared !== check.seCounted && declared !== check.seCountedWithoutLists)
      this.warn(`SE01 says ${declared} segments, the set has ${check.seCounted}`);
    this.first ??= check;
    this.crc = null;
    this.g85Result = "absent";
  }

  result(): EnvelopeCheck | null {
    return this.first;
  }
}

/** Parses an audit file. Never throws on content; what was odd is in `warnings`. */
export function parseEvaDts(input: string | Uint8Array, opts: ParseOptions = {}): EvaDtsReport {
  const maxBytes = opts.maxBytes ?? MAX_FILE_BYTES;
  const r = emptyReport();
  let dropped = 0;
  const warn = (m: string) => {
    if (r.warnings.length < MAX_WARNINGS) r.warnings.push(m);
    else dropped++;
  };
  let text = typeof input === "string" ? input : Buffer.from(input).toString("latin1");
  if (text.length > maxBytes) {
    warn(`file is ${text.length} bytes; only the first ${maxBytes} were read`);
    text = text.slice(0, maxBytes);
  }
  const env = new EnvelopeTracker(warn);
  const state: SegmentState = { product: null, eventKeys: new Set(), warn };
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? "").replace(/\r$/, "");
    if (raw.trim() === "") continue;
    if (raw.length > MAX_LINE_CHARS) {
      warn(`line ${i + 1}: ${raw.length} characters, longer than any segment; skipped`);
      continue;
    }
    const { id, elements } = split(raw);
    if (!SEGMENT_ID.test(id)) {
      warn(`line ${i + 1}: '${raw.slice(0, 20)}' is not a segment; skipped`);
      continue;
    }
    env.line(raw, id, elements);
    r.segments.push({ id, elements, line: i + 1 });
    applySegment(r, new Elements(id, elements, i + 1, warn), state);
  }
  const check = env.result();
  if (check) r.check = check;
  else warn("no complete ST..SE transmission set; G85 and SE not checked");
  if (dropped > 0) r.warnings.push(`${dropped} more warnings not shown`);
  return r;
}
