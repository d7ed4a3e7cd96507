/**
 * The events a vending machine pushed by itself over DEX (issue 36): a unit journals each push as a DEX read
 * of trigger `push` (raw file, no counters) and sends it once; the fleet lists their event segments (EA*: door
 * openings, errors) per unit on the DEX audits page. A push is never a window's read in the three-way report.
 */
export interface DexPush {
  unit: string;
  readId: string;
  at: number;
  outcome: string;
  /** The file's event segments as sent (EA1–EA7), at most MAX_EVENTS. */
  events: string[];
  error: string | null;
}

const MAX_EVENTS = 50;

/** The event segments of an EVA-DTS file (without their line ends). */
export function eventSegments(raw: string | null): string[] {
  if (raw === null) return [];
  return raw
    .split(/\r?\n/)
    .filter((l) => /^EA[1-7]\*/.test(l))
    .slice(0, MAX_EVENTS);
}
