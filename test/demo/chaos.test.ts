import { describe, expect, it } from "vitest";
import { socatAvailable } from "../../drivers/vmc/simulator/pty.js";
import { vendd } from "../support/cli.js";

// The chaos self-check runs the simulated machine on a PTY: it needs socat (.ci/run installs it).
const hasSocat = socatAvailable();
if (!hasSocat) process.stderr.write("demo-chaos.test.ts: socat not found, chaos CLI tests skipped\n");

describe.skipIf(!hasSocat)("vendd demo --chaos (daemon killed at random, restarted, reconciled)", () => {
  it.each([
    ["v10", "selection", "41"],
    ["legacy", "checkin", "42"],
  ])(
    "stays consistent with the %s driver and the %s flow (seed %s)",
    async (driver, flow, seed) => {
      const r = await vendd(
        ["demo", "--chaos", seed, "--vends", "8", "--json", "--driver", driver, "--flow", flow],
        {
          timeoutMs: 120_000,
        },
      );
      expect(r.code).toBe(0);
      const lines = r.stdout.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] ?? "")).toMatchObject({ vends: 8, consistent: true });
    },
    130_000,
  );

  it("refuses a seed that is not an integer", async () => {
    const r = await vendd(["demo", "--chaos", "abc"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--chaos takes an integer seed");
  });
});
