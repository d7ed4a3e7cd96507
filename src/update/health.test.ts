/** The health gate's reading of the daemon's status, and its timing on an injected clock. */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { controlSocketProbe, type HealthSample, healthFromStatus, healthGate } from "./health.js";
import { JumpClock } from "./update.test-support.js";

const OK: HealthSample = { ready: true, vmcLinkUp: true, serviceReachable: true, journalErrors: 0 };
const noFaults = { hit() {} };

describe("healthFromStatus", () => {
  it("maps the daemon's links (up/down/unknown) and takes an explicit health section as it is", () => {
    expect(healthFromStatus({ links: { vmc: "up", payment: "up", journal: "up" }, inService: true })).toEqual(
      OK,
    );
    expect(healthFromStatus({ links: { vmc: "down", payment: "unknown", journal: "down" } })).toEqual({
      ready: false,
      vmcLinkUp: false,
      serviceReachable: false,
      journalErrors: 1,
    });
    expect(healthFromStatus({ health: { ...OK, journalErrors: 2 } })).toEqual({ ...OK, journalErrors: 2 });
    expect(
      healthFromStatus({
        links: { vmc: "up", payment: "up", journal: "up" },
        inService: false,
        reasons: [{ code: "vmc_disabled", detail: "", retryAt: null }],
      }),
    ).toEqual({ ...OK, outOfService: "vmc_disabled" });
    expect(() => healthFromStatus({ unitId: "x" })).toThrow("neither links nor a health section");
  });
});

describe("healthGate", () => {
  it("passes after holdMs of continuous health; a relapse restarts the hold", async () => {
    const seq = [OK, OK, { ...OK, vmcLinkUp: false }, OK, OK, OK, OK, OK];
    let i = 0;
    const clock = new JumpClock();
    const start = clock.now();
    const r = await healthGate(
      { sample: async () => seq[Math.min(i++, seq.length - 1)] ?? OK },
      { holdMs: 200, timeoutMs: 10_000, pollMs: 50 },
      clock,
      noFaults,
    );
    expect(r).toEqual({ healthy: true });
    // Healthy from sample 4 (t=150) to t=350.
    expect(clock.now() - start).toBe(350);
  });

  it("counts down at least every 5 s while it waits (issue 43)", async () => {
    const lines: string[] = [];
    await healthGate(
      { sample: async () => ({ ...OK, ready: false }) },
      { holdMs: 60_000, timeoutMs: 20_000, pollMs: 1000 },
      new JumpClock(),
      noFaults,
      (l) => lines.push(l),
    );
    expect(lines).toEqual([
      "health gate: the daemon has 20 s to be ready and then healthy for 60 s",
      "health gate: 20 s left; waiting: not ready",
      "health gate: 15 s left; waiting: not ready",
      "health gate: 10 s left; waiting: not ready",
      "health gate: 5 s left; waiting: not ready",
      "health gate: time is up (not ready)",
    ]);
  });

  it("an out-of-service daemon is not healthy, with its reasons in the report", async () => {
    const r = await healthGate(
      { sample: async () => ({ ...OK, outOfService: "vmc_disabled" }) },
      { holdMs: 0, timeoutMs: 200, pollMs: 100 },
      new JumpClock(),
      noFaults,
    );
    expect(r).toMatchObject({ healthy: false });
    expect((r as { reason: string }).reason).toContain("out of service (vmc_disabled)");
  });

  it("fails at the deadline with the last problem, and when the daemon cannot be asked", async () => {
    const r = await healthGate(
      { sample: async () => ({ ...OK, serviceReachable: false }) },
      { holdMs: 0, timeoutMs: 1000, pollMs: 100 },
      new JumpClock(),
      noFaults,
    );
    expect(r).toEqual({
      healthy: false,
      reason: "not healthy for 0 ms within 1000 ms of the restart (payment service unreachable)",
    });
    const down = await healthGate(
      { sample: () => Promise.reject(new Error("ECONNREFUSED")) },
      { holdMs: 0, timeoutMs: 500, pollMs: 100 },
      new JumpClock(),
      noFaults,
    );
    expect(down).toMatchObject({ healthy: false });
    expect((down as { reason: string }).reason).toContain("status unavailable (ECONNREFUSED)");
  });
});

describe("controlSocketProbe", () => {
  it("asks status over the Unix socket and reads the answer", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "vendd-health-")), "control.sock");
    const server = createServer((sock) => {
      sock.once("data", (d) => {
        const req = JSON.parse(d.toString()) as { id: number; cmd: string; v: number };
        expect(req).toMatchObject({ v: 1, cmd: "status" });
        sock.end(
          `${JSON.stringify({ v: 1, id: req.id, ok: true, result: { links: { vmc: "up", payment: "up", journal: "up" } } })}\n`,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      expect(await controlSocketProbe(path).sample()).toEqual(OK);
    } finally {
      server.close();
    }
    await expect(controlSocketProbe(`${path}.none`).sample()).rejects.toThrow("ENOENT");
  });
});
