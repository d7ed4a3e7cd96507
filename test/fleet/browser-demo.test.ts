/**
 * The dashboard against a running demo fleet (issue 16 acceptance: "each page renders with data from a running
 * demo fleet"): the built `vendd demo --fleet` runs (fleet server, three demo units vending through the
 * emulator and reporting through their outbox); once every unit's sales are on the fleet, headless Chromium
 * logs in with the demo's manager password (--fleet-password-file), and the overview, units, each unit, sales
 * and bundles pages render with the demo's data, the charts draw, the CSV export downloads with a row per demo
 * unit, with no console error, page error, failed request or dialog. Then Ctrl-C (SIGINT): the demo drains,
 * prints its summary and it is consistent (the fleet's sales equal the journals').
 *
 * Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it) and the build
 * (`npx tsc -p tsconfig.build.json`). One browser launch. Screenshots: test-artifacts/fleet-browser-demo/.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFleetDb } from "../../src/fleet/database.js";
import {
  expectChart as expectDrawnChart,
  launchWatchedChromium,
  requireChromium,
  shot as shotTo,
} from "../support/browser.js";
import { CLI } from "../support/cli.js";

const ARTIFACTS = join("test-artifacts", "fleet-browser-demo");
const DEMO_UNITS = ["demo-1", "demo-2", "demo-3"];

describe("fleet dashboard in Chromium against vendd demo --fleet", () => {
  let dir: string;
  let demo: ChildProcess;
  let exit: Promise<NodeJS.Signals | number>;
  let stdout = "";
  let stderr = "";
  let base: string;
  let browser: BrowserContext;
  let page: Page;
  let problems: string[];
  let dialogs: string[];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    expect(existsSync(CLI), "build first: npx tsc -p tsconfig.build.json").toBe(true);
    dir = mkdtempSync(join(tmpdir(), "vendd-demo-fleet-browser-"));
    demo = spawn(
      process.execPath,
      [
        CLI,
        "demo",
        "--fleet",
        "--seed",
        "7",
        "--fleet-db",
        join(dir, "fleet.db"),
        "--fleet-password-file",
        join(dir, "password"),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    exit = new Promise((done) => demo.once("exit", (code, signal) => done(signal ?? code ?? -1)));
    demo.stdout?.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    const url = await new Promise<string>((found, fail) => {
      const timer = setTimeout(() => fail(new Error(`no dashboard URL: ${stderr}`)), 30_000);
      demo.stderr?.on("data", (b: Buffer) => {
        stderr += b.toString();
        const m = /fleet dashboard: (http:\/\/\S+?)\/? /.exec(stderr);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          found(m[1]);
        }
      });
      void exit.then((how) => fail(new Error(`the demo exited (${how}): ${stderr}`)));
    });
    base = url;
    // Wait until every demo unit has sales on the fleet (a vend takes a few seconds; the link polls every 5 s).
    const fdb = await openFleetDb(join(dir, "fleet.db"));
    try {
      const until = Date.now() + 60_000;
      for (;;) {
        const rows = await fdb.db
          .selectFrom("sales")
          .select("unit_id")
          .where("captured", ">", 0)
          .groupBy("unit_id")
          .execute();
        if (DEMO_UNITS.every((u) => rows.some((r) => r.unit_id === u))) break;
        if (Date.now() > until) throw new Error(`no sales from every demo unit: ${stderr}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await fdb.close();
    }
    const profile = join(dir, "chromium");
    ({ browser, page, problems, dialogs } = await launchWatchedChromium(profile));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (demo !== undefined && demo.exitCode === null && demo.signalCode === null) {
      demo.kill("SIGKILL");
      await exit;
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const shot = (name: string): Promise<void> => shotTo(page, ARTIFACTS, name);
  const expectChart = (): Promise<void> => expectDrawnChart(page);

  it("logs in with the demo's manager, every page shows the demo's units and sales, CSV downloads; Ctrl-C ends consistent", async () => {
    const password = readFileSync(join(dir, "password"), "utf8").trim();
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(stderr).not.toContain(password);

    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill("input[name=username]", "manager");
    await page.fill("input[name=password]", password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    expect(await page.textContent("h1")).toBe("Fleet overview");
    expect(await page.textContent("header .who")).toContain("manager (manager)");
    expect(await page.textContent("main")).toContain("units online");
    await expectChart();
    await shot("overview");

    await page.goto(`${base}/units`);
    expect(await page.textContent("h1")).toBe("Units");
    const units = (await page.textContent("main")) ?? "";
    for (const id of DEMO_UNITS) expect(units).toContain(id);
    await shot("units");

    for (const id of DEMO_UNITS) {
      await page.goto(`${base}/units/${id}`);
      expect(await page.textContent("h1")).toBe(`Unit ${id}`);
      const main = (await page.textContent("main")) ?? "";
      expect(main).toContain("Recent vends");
      expect(main).toContain("captured");
      await expectChart();
      await shot(`unit-${id}`);
    }

    await page.goto(`${base}/sales`);
    expect(await page.textContent("h1")).toBe("Sales");
    const sales = (await page.textContent("main")) ?? "";
    for (const id of DEMO_UNITS) expect(sales).toContain(id);
    await shot("sales");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("a.csv[href*='group=unit']"),
    ]);
    const csvPath = join(ARTIFACTS, download.suggestedFilename());
    await download.saveAs(csvPath);
    const lines = readFileSync(csvPath, "utf8").trim().split("\r\n");
    expect(lines[0]).toBe("unit,currency,sessions,sales,captured,refunded,net,vends_ok,vends_failed");
    for (const id of DEMO_UNITS) {
      const row = lines.find((l) => l.startsWith(`${id},`))?.split(",");
      expect(row, `CSV row of ${id}`).toBeDefined();
      expect(Number(row?.[4])).toBeGreaterThan(0);
    }

    await page.goto(`${base}/bundles`);
    expect(await page.textContent("h1")).toBe("Bundles");
    await shot("bundles");

    const downloadAbort = `request failed: ${download.url()} net::ERR_ABORTED`;
    expect(problems.filter((p) => p !== downloadAbort)).toEqual([]);
    expect(dialogs).toEqual([]);

    // Ctrl-C: the units stop, drain their outbox to the fleet, and the summary compares fleet and journals.
    demo.kill("SIGINT");
    const how = await Promise.race([exit, new Promise((r) => setTimeout(() => r("timeout"), 40_000))]);
    expect(how, stderr).toBe(0);
    const summary = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
    expect(summary).toMatchObject({ units: 3, consistent: true });
    expect(summary.fleetSalesTotal).toBe(summary.journalsTotal);
    expect(Number(summary.captured)).toBeGreaterThanOrEqual(3);
  }, 90_000);
});
