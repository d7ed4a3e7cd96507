import { describe, expect, it } from "vitest";
import { LOCKOUT_MAX_MS, lockedUntil, lockoutMs } from "./lockout.js";

describe("console lockout policy", () => {
  it("locks after 5 failures for 30 s, doubling with each further failure, capped at a day", () => {
    expect([0, 1, 4].map(lockoutMs)).toEqual([0, 0, 0]);
    expect([5, 6, 7, 8].map(lockoutMs)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(lockoutMs(40)).toBe(LOCKOUT_MAX_MS);
  });

  it("counts pending attempts as failures and runs from the last failure", () => {
    const at = (t: number, state: "pending" | "failed" = "failed") => ({ at: t, state });
    const four = [at(0), at(1), at(2), at(3, "pending")];
    expect(lockedUntil(four, 10)).toBeNull();
    const five = [...four, at(100)];
    expect(lockedUntil(five, 100)).toBe(30_100);
    expect(lockedUntil(five, 30_100)).toBeNull();
    expect(lockedUntil([...five, at(40_000)], 40_000)).toBe(100_000);
    expect(lockedUntil([], 0)).toBeNull();
  });
});
