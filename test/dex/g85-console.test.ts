/**
 * Issue 42: a machine whose audit file fails its G85 check (every block's CRC right, the file's own check
 * wrong). The built `vendd run` reads the simulated machine over a socat PTY; the technician console's `dex
 * read` and `dex last` say the counters are "unverified (G85)"; the journal keeps the file (outcome ok, G85
 * bad) and its outbox event carries the flag to the fleet.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hashPin } from "../../src/core/pin.js";
import { CANARY_PIN, PtyConsole } from "../support/console.js";
import { HAVE_SOCAT } from "../support/daemon.js";
import { unitWithDex } from "../support/dexUnit.js";

let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

describe.skipIf(!HAVE_SOCAT)("a DEX file whose G85 check fails", () => {
  it("is kept, and the console says its counters are unverified (G85)", async () => {
    const u = await unitWithDex(cleanups, pinHash, { prefix: "vendd-dex-g85-" });
    await expect.poll(() => u.sim.machine.reads, { timeout: 20_000 }).toBe(1);
    u.sim.vmd.faults.badG85 = true;
    u.sim.machine.vend("11", "DA");
    const c = PtyConsole.start(u.socket, 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    await c.line(
      "dex read",
      /\(console\): ok\s+\d+ bytes, unit as master, G85 bad: counters unverified \(G85\)/,
      30_000,
    );
    await c.line("dex last", /G85 bad: counters unverified \(G85\)[\s\S]*cashless\s+1 vends, 1\.50/);
    expect(u.daemon.current.out).toMatch(/"g85":"bad","counters":"unverified \(G85\)"[^\n]*"msg":"DEX read"/);
    const db = new Database(join(u.dir, "journal.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT trigger, outcome, g85, raw FROM dex_reads ORDER BY id").all() as {
        trigger: string;
        outcome: string;
        g85: string;
        raw: string;
      }[];
      expect(rows.map((r) => [r.trigger, r.outcome, r.g85])).toEqual([
        ["schedule", "ok", "ok"],
        ["console", "ok", "bad"],
      ]);
      expect(rows[1]?.raw).toContain("DA2*150*1*150*1");
    } finally {
      db.close();
    }
  }, 90_000);
});
