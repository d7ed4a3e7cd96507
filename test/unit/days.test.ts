/**
 * Issue 32, defect 4: one strict day parser and one range rule (src/core/days.ts) for the CLI, the
 * technician console, the dashboard and its API. Before: console `sales 2026-02-30` answered "no sales",
 * `journal export --from 2026-13-01` printed `Invalid time value`, `reconcile` took a 27-year range while
 * the dashboard capped one year, and `/sales.csv?group=foo` blamed from/to.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../src/console/commands.js";
import { ManualClock } from "../../src/core/clock.js";
import { isDay, MAX_RANGE_DAYS, rangeRefusal } from "../../src/core/days.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { salesFilter } from "../../src/fleet/sales/routes.js";
import { vendd } from "../support/cli.js";

describe("one day parser, one range rule", () => {
  it("days that do not exist are refused, everywhere the same", () => {
    for (const bad of ["2026-02-30", "2026-13-01", "2026-00-10", "2026-2-3", "2025-02-29", "0000-00-00"])
      expect([bad, isDay(bad)]).toEqual([bad, false]);
    for (const good of ["2024-02-29", "2026-12-31", "2026-01-01"])
      expect([good, isDay(good)]).toEqual([good, true]);
    expect(rangeRefusal("2026-01-01", "2026-12-31")).toBeNull();
    expect(rangeRefusal("2024-01-01", "2024-12-31")).toBeNull(); // 366 days
    expect(rangeRefusal("1999-01-01", "2026-01-01")).toMatch(`at most ${MAX_RANGE_DAYS}`);
    expect(rangeRefusal("2026-02-02", "2026-02-01")).toMatch(/--to 2026-02-01 is before --from 2026-02-02/);
  });

  it("the console names the day it refuses", () => {
    expect(parseLine("sales 2026-02-30", "2026-03-01")).toEqual({
      kind: "error",
      text: expect.stringMatching(/^sales 2026-02-30: not a day/),
    });
    expect(parseLine("sales --from 2026-01-01 --to 2026-13-01", "2026-03-01")).toEqual({
      kind: "error",
      text: expect.stringMatching(/^--to 2026-13-01: not a day/),
    });
    expect(parseLine("sales 2026-02-28", "2026-03-01")).toMatchObject({ kind: "request" });
  });

  it("the dashboard and the API name the parameter at fault", () => {
    const ctx = {
      clock: new ManualClock(Date.parse("2026-06-01T12:00:00Z")),
      timeZone: "UTC",
    } as unknown as FleetContext;
    expect(salesFilter(ctx, { group: "foo" })).toEqual({ refusal: "group: one of day, unit, item" });
    expect(salesFilter(ctx, { from: "2026-02-30" })).toEqual({
      refusal: expect.stringMatching(/^from 2026-02-30: not a day/),
    });
    expect(salesFilter(ctx, { from: "2020-01-01", to: "2026-01-01" })).toEqual({
      refusal: expect.stringMatching(/at most 366/),
    });
    expect(salesFilter(ctx, {})).toMatchObject({ from: "2026-05-03", to: "2026-06-01", group: "day" });
  });

  it("the CLI: exit 2 naming the option, never 'Invalid time value'", async () => {
    const exp = await vendd(["journal", "export", "--journal", "/nonexistent/j.db", "--from", "2026-13-01"]);
    expect(exp.code).toBe(2);
    expect(exp.stderr).toContain("--from 2026-13-01: not a day");
    expect(exp.stderr).not.toContain("Invalid time value");
    const rec = await vendd([
      "reconcile",
      "--journal",
      "/nonexistent/j.db",
      "--from",
      "1999-01-01",
      "--to",
      "2026-01-01",
    ]);
    expect(rec.code).toBe(2);
    expect(rec.stderr).toContain("at most 366 (a year) at once");
    const fleet = await vendd(["fleet", "reconcile", "--from", "2026-01-01", "--to", "2026-02-30"]);
    expect(fleet.code).toBe(2);
    expect(fleet.stderr).toContain("--to 2026-02-30: not a day");
  }, 60_000);
});
