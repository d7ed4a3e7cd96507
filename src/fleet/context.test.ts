import { describe, expect, it } from "vitest";
import { dayOf } from "./context.js";

const formats = new Map<string, Intl.DateTimeFormat>();
/** The day straight from Intl, without dayOf's quarter-hour memory. */
function fresh(ms: number, timeZone: string): string {
  let f = formats.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    formats.set(timeZone, f);
  }
  return f.format(new Date(ms));
}

describe("dayOf: the sales day of an instant in the fleet's time zone", () => {
  it("matches Intl minute by minute around midnights and DST changes, in zones with odd offsets", () => {
    const zones = ["Europe/Oslo", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns", "UTC"];
    // A spring-forward night in Oslo, Lord Howe's half-hour DST change, and an ordinary day.
    const starts = ["2026-03-28T20:00:00Z", "2026-04-04T10:00:00Z", "2026-11-27T00:00:00Z"];
    for (const zone of zones)
      for (const start of starts) {
        const t0 = Date.parse(start);
        for (let m = 0; m < 36 * 60; m += 1) {
          const ms = t0 + m * 60_000 + 59_999;
          expect(dayOf(ms, zone), `${zone} ${new Date(ms).toISOString()}`).toBe(fresh(ms, zone));
        }
      }
  });
});
