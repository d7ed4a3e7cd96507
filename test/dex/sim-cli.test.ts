/**
 * `vendd sim-dex` as a user meets it: a real process makes a PTY, vends from its script move the machine's
 * counters, and the DEX reader reads them over the PTY; the simulator's status shows one completed read.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseEvaDts } from "../../drivers/dex/evadts.js";
import { DexReader } from "../../drivers/dex/reader.js";
import { socatAvailable } from "../../drivers/vmc/simulator/pty.js";
import { systemClock } from "../../src/core/clock.js";
import { CLI, vendd } from "../support/cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!socatAvailable())("vendd sim-dex", () => {
  it("serves an audit file that follows its vends, over a PTY, to the DEX reader", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-simdex-"));
    dirs.push(dir);
    const device = join(dir, "dex");
    const script = join(dir, "script");
    writeFileSync(script, `vend 11 card\nvend 12 cash\nvend 13 card\nstatus\nwait 4000\nstatus\nquit\n`);
    const child = spawn(process.execPath, [CLI, "sim-dex", "--device", device, "--script", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on("close", r));
    await expect.poll(() => out.includes('"reads":0'), { timeout: 10_000 }).toBe(true);
    const reader = await DexReader.open({ path: device, commId: "VND0000001", clock: systemClock });
    try {
      const read = await reader.read();
      const r = parseEvaDts(read.data ?? Buffer.alloc(0));
      expect(r.cashless1.sales).toEqual({ valueInit: 350, countInit: 2, valueReset: 350, countReset: 2 });
      expect(r.cash.sales?.valueInit).toBe(270);
      expect(r.products.map((p) => p.paid?.countInit)).toEqual([1, 1, 1]);
    } finally {
      await reader.close();
    }
    expect(await exited).toBe(0);
    expect(out).toContain('"totals":{"vends":3,"value":620,"cashless":350,"cash":270},"reads":1');
  }, 30_000);

  it("refuses a bad role with a usage error", async () => {
    const r = await vendd(["sim-dex", "--role", "boss"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--role must be slave or master, not 'boss'");
  });
});
