/**
 * DEX reads through the running daemon (issue 36): the built `vendd run` with dex enabled on a PTY where the
 * VMC-side simulator answers; the technician console's `dex last` and `dex read` over a real PTY; the read
 * journaled with its raw file; the machine's since-init counters untouched.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hashPin } from "../../src/core/pin.js";
import { CANARY_PIN, PtyConsole } from "../support/console.js";
import { HAVE_SOCAT } from "../support/daemon.js";
import { unitWithDex as startUnitWithDex } from "../support/dexUnit.js";

const run = promisify(execFile);
let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const unitWithDex = (silent = false) =>
  startUnitWithDex(cleanups, pinHash, { silent, prefix: "vendd-dex-console-" });

describe.skipIf(!HAVE_SOCAT)("DEX reads from the technician console", () => {
  it("dex last, dex read: the read is journaled with its raw file and nothing in the machine resets", async () => {
    const u = await unitWithDex();
    u.sim.machine.vend("11", "DA");
    u.sim.machine.vend("12", "CA");
    const c = PtyConsole.start(u.socket, 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    await c.line("help dex", "dex read|last");
    await c.line("dex", "usage: dex read|last");
    // a fresh unit has no read since the last scheduled slot: it reads at start (its baseline)
    await expect.poll(() => u.sim.machine.reads, { timeout: 20_000 }).toBe(1);
    await c.line("dex last", /DEX read \S+ \(schedule\): ok/);
    await c.line(
      "dex read",
      /DEX read \S+ \(console\): ok\s+\d+ bytes, unit as master, G85 ok, 0 warning\(s\)[\s\S]*cashless\s+1 vends, 1\.50[\s\S]*vendd> /,
      30_000,
    );
    await c.line("dex last", /cash\s+1 vends, 2\.70/);
    expect(u.sim.machine.reads).toBe(2);
    expect(u.sim.machine.configRequests).toBe(0);
    expect(u.sim.machine.totals()).toEqual({ vends: 2, value: 420, cashless: 150, cash: 270 });
    const db = new Database(join(u.dir, "journal.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT trigger, outcome, raw FROM dex_reads").all() as {
        trigger: string;
        outcome: string;
        raw: string;
      }[];
      expect(rows.map((r) => [r.trigger, r.outcome])).toEqual([
        ["schedule", "ok"],
        ["console", "ok"],
      ]);
      expect(rows[1]?.raw).toMatch(/^DXS\*SIM0000001\*VA\*V0\/6\*1\r\n/);
      const audit = db
        .prepare("SELECT command FROM console_audit WHERE command LIKE 'dex%' ORDER BY id")
        .pluck()
        .all();
      // A refused line is audited too (issue 33), with the reason it was refused.
      expect(audit).toEqual(["dex (refused: usage)", "dex last", "dex read", "dex last"]);
    } finally {
      db.close();
    }
  }, 90_000);

  it("a unit killed during a read restarts, reads again, and journals the read once", async () => {
    const u = await unitWithDex(true);
    u.sim.machine.vend("13", "DA");
    // the read is running: the machine (silent for now) leaves the unit's ENQs unanswered
    await expect.poll(() => u.sim.vmd.stats.enqIgnored, { timeout: 20_000 }).toBeGreaterThan(0);
    u.daemon.current.child.kill("SIGKILL");
    u.sim.vmd.faults.silent = false;
    await u.daemon.waitRuns(2, "unit in service", 30_000);
    await expect.poll(() => u.sim.machine.reads, { timeout: 30_000 }).toBe(1);
    await expect
      .poll(() => u.daemon.current.out.includes('"msg":"DEX read"'), { timeout: 10_000 })
      .toBe(true);
    const db = new Database(join(u.dir, "journal.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT trigger, outcome FROM dex_reads").all();
      expect(rows).toEqual([{ trigger: "schedule", outcome: "ok" }]);
    } finally {
      db.close();
    }
    expect(u.sim.machine.totals()).toEqual({ vends: 1, value: 200, cashless: 200, cash: 0 });
  }, 120_000);

  it("a machine that opens a session by itself: the daemon journals what it pushed", async () => {
    const u = await unitWithDex();
    await expect.poll(() => u.sim.machine.reads, { timeout: 20_000 }).toBe(1);
    u.sim.machine.door({ date: "20261128", time: "0930" });
    expect(await u.sim.vmd.push()).toBe(true);
    await expect
      .poll(() => u.daemon.current.out.includes('"msg":"DEX push from the machine"'), { timeout: 10_000 })
      .toBe(true);
    const db = new Database(join(u.dir, "journal.db"), { readonly: true });
    try {
      const rows = db
        .prepare("SELECT trigger, outcome, role, counters, raw FROM dex_reads ORDER BY id")
        .all() as {
        trigger: string;
        outcome: string;
        role: string;
        counters: string | null;
        raw: string;
      }[];
      expect(rows.map((r) => [r.trigger, r.outcome])).toEqual([
        ["schedule", "ok"],
        ["push", "ok"],
      ]);
      expect(rows[1]).toMatchObject({ role: "slave", counters: null });
      expect(rows[1]?.raw).toContain("EA1*EGS*20261128*0930");
    } finally {
      db.close();
    }
    expect(u.sim.machine.reads).toBe(1);
    // issue 42: `dex last` shows the push, each payment device apart; `vendd journal export --dex` has both
    const c = PtyConsole.start(u.socket, 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    const last = await c.line("dex last", /last push\s+\S+, \d+ bytes: EGS[\s\S]*vendd> /);
    expect(last).toMatch(/cashless 1\s+0 vends, 0\.00/);
    const exported = await run(process.execPath, [
      "dist/src/cli/main.js",
      "journal",
      "export",
      "--dex",
      "--journal",
      join(u.dir, "journal.db"),
    ]);
    const lines = exported.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { trigger: string; outcome: string; verified: boolean; raw: string });
    expect(lines.map((l) => [l.trigger, l.outcome, l.verified])).toEqual([
      ["schedule", "ok", true],
      ["push", "ok", true],
    ]);
    expect(lines[1]?.raw).toContain("EA1*EGS*20261128*0930");
  }, 90_000);
});
