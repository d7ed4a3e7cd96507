/**
 * `vendd demo --dex` (issue 36, built CLI): each demo unit's simulated machine keeps EVA-DTS audit counters
 * that follow the vends it delivers, and the unit reads them over a socat PTY through the real DEX reader
 * before its first vend and after its last. With `--fleet` the reads reach the fleet through the outbox and
 * the summary carries the fleet's three-way report of the demo's days: clean, the service column labelled
 * empty (the demo runs no settlement reconciliation).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/postgresServer.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { loadDexReport } from "../../src/fleet/dex/load.js";
import { vendd } from "../support/cli.js";
import { startFleet, stopFleet } from "../support/fleetE2e.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-demo-dex-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface CountValue {
  count: number;
  value: number;
}

const cashless = (counters: string | null): CountValue => {
  const c = (JSON.parse(counters ?? "null") as { cashless: CountValue } | null)?.cashless;
  if (c === undefined) throw new Error(`no cashless counter in ${counters}`);
  return c;
};

const today = () => new Date().toISOString().slice(0, 10);

describe("vendd demo --dex", () => {
  it("--fleet --dex --vends 3 --json: two reads per unit on the fleet, the machine's counters equal the unit's sales, the three-way clean", async () => {
    const db = join(dir, "fleet.db");
    const from = today();
    const r = await vendd(
      [
        "demo",
        "--fleet",
        "--dex",
        "--vends",
        "3",
        "--json",
        "--seed",
        "5",
        "--fleet-db",
        db,
        "--fleet-password-file",
        join(dir, "password"),
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim()) as {
      units: number;
      vends: number;
      consistent: boolean;
      dex: {
        clean: boolean;
        service: string;
        classes: Record<string, { rows: number; count: number; amount: number }>;
        units: { unit: string; reads: number; machine: CountValue; unitSales: CountValue; clean: boolean }[];
        reads: {
          unit: string;
          reads: number;
          okReads: number;
          agree: boolean;
          machineCashless: CountValue;
        }[];
      };
    };
    expect(summary).toMatchObject({ units: 3, vends: 9, consistent: true });
    expect(summary.dex.clean).toBe(true);
    expect(Object.keys(summary.dex.classes)).toEqual(["matched"]);
    expect(summary.dex.service).toMatch(/^not compared: the demo runs no settlement reconciliation/);
    expect(summary.dex.units.map((u) => [u.unit, u.reads, u.clean])).toEqual([
      ["demo-1", 2, true],
      ["demo-2", 2, true],
      ["demo-3", 2, true],
    ]);
    for (const u of summary.dex.units) {
      expect(u.machine).toEqual(u.unitSales);
      expect(u.machine.count).toBe(3);
    }
    for (const u of summary.dex.reads) expect([u.reads, u.okReads, u.agree]).toEqual([2, 2, true]);

    // The fleet's own rows: each unit's two reads, before its first sale and after its last, whose cashless
    // counters moved by exactly the unit's delivered, captured sales.
    const fdb = await openFleetDb(db);
    try {
      for (const unit of ["demo-1", "demo-2", "demo-3"]) {
        const reads = await fdb.db
          .selectFrom("dex_reads")
          .select(["at", "trigger", "outcome", "counters"])
          .where("unit_id", "=", unit)
          .orderBy("at")
          .execute();
        expect(reads.map((x) => [x.trigger, x.outcome])).toEqual([
          ["schedule", "ok"],
          ["schedule", "ok"],
        ]);
        const sales = await fdb.db
          .selectFrom("sales")
          .select(["closed_at", "captured", "refunded", "vends_ok"])
          .where("unit_id", "=", unit)
          .execute();
        expect(sales).toHaveLength(3);
        const [first, last] = [reads[0], reads[1]];
        if (first === undefined || last === undefined) throw new Error("two reads expected");
        for (const s of sales) {
          expect(Number(s.closed_at)).toBeGreaterThan(Number(first.at));
          expect(Number(s.closed_at)).toBeLessThan(Number(last.at));
        }
        const a = cashless(first.counters);
        const b = cashless(last.counters);
        const sold = sales.filter((s) => Number(s.vends_ok) > 0);
        expect({ count: b.count - a.count, value: b.value - a.value }).toEqual({
          count: sold.length,
          value: sold.reduce((n, s) => n + Number(s.captured) - Number(s.refunded), 0),
        });
      }
      // The same report the dashboard's /dex page and `vendd fleet reconcile --dex` show.
      const report = await loadDexReport(fdb.db, { from, to: today(), timeZone: "UTC" });
      expect(report.clean).toBe(true);
      expect(report.units.map((u) => u.windows.length)).toEqual([1, 1, 1]);
    } finally {
      await fdb.close();
    }

    // The demo's dashboard on the same database: its DEX audits page lists each unit's matched window.
    const fleet = await startFleet(db, await freePort());
    try {
      const form = { username: "manager", password: readFileSync(join(dir, "password"), "utf8").trim() };
      const login = await fetch(`${fleet.url}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: fleet.url, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
      expect(login.status).toBe(303);
      const cookie = login.headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .join("; ");
      const page = await fetch(`${fleet.url}/dex?from=${from}&to=${today()}`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const body = await page.text();
      for (const unit of ["demo-1", "demo-2", "demo-3"]) expect(body).toContain(unit);
      expect(body).toContain("matched");
      expect(body).not.toContain("No DEX reads in this period");
    } finally {
      await stopFleet(fleet);
    }
  }, 90_000);

  it("--dex --vmc pty --vends 3 --json: the unit reads the PTY machine twice, its counters equal the captured sales", async () => {
    const r = await vendd(["demo", "--dex", "--vmc", "pty", "--vends", "3", "--json", "--seed", "3"], {
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout.trim()) as {
      captured: number;
      dex: {
        reads: number;
        okReads: number;
        machineCashless: CountValue;
        unitCaptured: CountValue;
        agree: boolean;
      };
    };
    expect(summary.dex).toMatchObject({ reads: 2, okReads: 2, agree: true });
    expect(summary.dex.machineCashless).toEqual(summary.dex.unitCaptured);
    expect(summary.dex.machineCashless.count).toBe(summary.captured);
  }, 70_000);

  it("refuses --dex with the pulse board", async () => {
    const r = await vendd(["demo", "--dex", "--board", "sim-pulse"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--dex needs the sim board");
  });
});
