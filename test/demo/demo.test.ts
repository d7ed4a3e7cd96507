import { describe, expect, it } from "vitest";
import { vendd } from "../support/cli.js";

function summary(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? "") as Record<string, unknown>;
}

describe("vendd demo (built CLI, emulator on loopback, real HTTP, file journal)", () => {
  it("runs 5 vends with the V10 driver and prints one consistent summary line", async () => {
    const r = await vendd(["demo", "--vends", "5", "--json", "--seed", "7"], { timeoutMs: 90_000 });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(summary(r.stdout)).toEqual({ vends: 5, captured: 5, cancelled: 0, denied: 0, consistent: true });
  }, 100_000);

  it("runs vends with the older interface's reservations and is consistent", async () => {
    const r = await vendd(["demo", "--driver", "legacy", "--vends", "3", "--json", "--seed", "3"], {
      timeoutMs: 90_000,
    });
    expect(r.code).toBe(0);
    expect(summary(r.stdout)).toEqual({ vends: 3, captured: 3, cancelled: 0, denied: 0, consistent: true });
  }, 100_000);

  it.each([["v10"], ["legacy"]])(
    "runs the check-in-first flow with the %s driver: sessions captured and consistent",
    async (driver) => {
      const r = await vendd(
        ["demo", "--flow", "checkin", "--driver", driver, "--vends", "2", "--json", "--seed", "4"],
        {
          timeoutMs: 90_000,
        },
      );
      expect(r.code).toBe(0);
      expect(summary(r.stdout)).toEqual({ vends: 2, captured: 2, cancelled: 0, denied: 0, consistent: true });
    },
    100_000,
  );

  it("shows the QR screen and completed vends on the terminal", async () => {
    const r = await vendd(["demo", "--vends", "2", "--seed", "1"], { timeoutMs: 90_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("▄");
    expect(r.stdout).toMatch(/DKK/);
    expect(r.stdout).toContain('"captured":2');
  }, 100_000);

  it("refuses bad arguments with a usage message", async () => {
    const r = await vendd(["demo", "--vends", "zero"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--vends must be a positive integer");
  });
});
