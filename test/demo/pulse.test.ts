import { describe, expect, it } from "vitest";
import { vendd } from "../support/cli.js";

describe("vendd demo --board sim-pulse (built CLI, pulse controller on simulated GPIO)", () => {
  it("the customer presses start, pays the board's price, the pulses go out; one consistent summary line", async () => {
    const r = await vendd(["demo", "--board", "sim-pulse", "--vends", "3", "--json", "--seed", "5"], {
      timeoutMs: 90_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "")).toEqual({
      vends: 3,
      captured: 3,
      cancelled: 0,
      denied: 0,
      consistent: true,
    });
  }, 100_000);

  it("refuses a board with real hardware", async () => {
    const r = await vendd(["demo", "--board", "pi-hat", "--vends", "1", "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--board must be one of: sim, sim-pulse");
  });
});
