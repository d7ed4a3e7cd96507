/**
 * One simulated machine owns both ports (issue 36): `vendd sim-vmc --dex-port PATH` as a real process plays
 * the MDB adapter and VMC on one PTY and the machine's DEX port on a second. A cashless vend the host
 * approves over MDB, the machine's own cash vends (one short of cash), a cashless vend through another device
 * and a delivered vend the machine does not count all move (or, for the last, do not move) the audit
 * counters the DEX reader reads over the second PTY (a block corrupted by `dex fault corrupt 2` is refused and
 * sent again); a second read finds the since-init counters unchanged.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { countersOf } from "../../drivers/dex/counters.js";
import { parseEvaDts } from "../../drivers/dex/evadts.js";
import { DexReader } from "../../drivers/dex/reader.js";
import { createAdapterController } from "../../drivers/vmc/adapter/index.js";
import { socatAvailable } from "../../drivers/vmc/simulator/pty.js";
import { systemClock } from "../../src/core/clock.js";
import { CLI } from "../support/cli.js";
import { EventLog, eventually } from "../support/vmc.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SCRIPT = `wait-enabled 10000
vend 11 1.50
wait-approval 10000
success
cash 12 2.70
cash 13 2.00 1.50
other-card 11 1.50
uncounted
wait 200
vend 21 1.25
wait-approval 10000
success
dex fault corrupt 2
dex status
wait 8000
dex status
quit
`;

describe.skipIf(!socatAvailable())("vendd sim-vmc --dex-port", () => {
  it("counts in DEX the vends the machine completes over MDB and by itself, never resetting on a read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-simvmc-dex-"));
    dirs.push(dir);
    const mdb = join(dir, "mdb");
    const dex = join(dir, "dex");
    writeFileSync(join(dir, "script"), SCRIPT);
    const child = spawn(
      process.execPath,
      [CLI, "sim-vmc", "--device", mdb, "--dex-port", dex, "--script", join(dir, "script"), "--quiet"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on("close", r));
    await eventually(() => existsSync(mdb) && existsSync(dex), 10_000, "both PTYs");
    await expect.poll(() => out, { timeout: 10_000 }).toContain(`dex: ${dex}`);
    const ctrl = createAdapterController({ path: mdb, currencyCode: "EUR", clock: systemClock });
    const log = new EventLog();
    ctrl.onEvent((e) => log.push(e));
    try {
      await ctrl.open();
      await log.waitType("vendRequested", 10_000);
      await ctrl.approveVend(150);
      await log.waitType("vendSucceeded", 5000);
      await eventually(() => log.types().filter((t) => t === "vendRequested").length === 2, 10_000, "2nd");
      await ctrl.approveVend(125);
      await eventually(() => log.types().filter((t) => t === "vendSucceeded").length === 2, 5000, "2nd ok");
    } finally {
      await ctrl.close();
    }
    await expect.poll(() => out.includes('"reads":0'), { timeout: 10_000 }).toBe(true);
    const reader = await DexReader.open({ path: dex, commId: "VND0000001", clock: systemClock });
    const reads = [];
    try {
      for (let i = 0; i < 2; i++)
        reads.push(countersOf(parseEvaDts((await reader.read()).data ?? Buffer.alloc(0))));
    } finally {
      await reader.close();
    }
    for (const c of reads) {
      // cashless: the approved 1.50 and another device's 1.50; the 1.25 vend was delivered but not counted
      expect(c.cashless).toEqual({ count: 2, value: 300 });
      expect(c.cash).toEqual({ count: 2, value: 470 });
      expect(c.cashNet).toBe(420);
      expect(c.paid).toEqual({ count: 4, value: 770 });
      expect(c.products.map((p) => [p.selection, p.count, p.value])).toEqual([
        ["11", 2, 300],
        ["12", 1, 270],
        ["13", 1, 200],
      ]);
    }
    expect(await exited).toBe(0);
    expect(out).toContain('"totals":{"vends":4,"value":770,"cashless":300,"cash":470},"reads":2');
    // the corrupted block was refused once and sent again: the read still completed
    expect(out).toMatch(/"reads":2,"sessions":2,"completed":2,"failed":0,"naksReceived":1/);
  }, 45_000);
});
