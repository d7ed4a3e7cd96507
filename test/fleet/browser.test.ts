/**
 * The fleet dashboard in headless Chromium (issue 16): log in, every page renders with data, the charts
 * are drawn by uPlot (a canvas of non-zero size), the CSV export downloads with the right content, no
 * console error, page error, failed request or dialog (the seed's `<script>` labels must stay text) on any
 * page, a post without the CSRF token is refused, logout. Screenshots go to test-artifacts/fleet-browser/.
 *
 * Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it). One browser launch, with a fresh
 * user data dir in a temp directory.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectChart as expectDrawnChart,
  launchWatchedChromium,
  requireChromium,
  shot as shotTo,
} from "../support/browser.js";
import { type ComposedFleet, startComposedFleet } from "../support/fleetCompose.js";
import { MANAGER, seededRange, UNITS, XSS } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-browser");

describe("fleet dashboard in Chromium", () => {
  let fleet: ComposedFleet;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  let problems: string[];
  let dialogs: string[];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    // The composed server (unit API, dashboard, reconciliation, plans, invoices) on the seeded database.
    fleet = await startComposedFleet();
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
    profile = mkdtempSync(join(tmpdir(), "vendd-chromium-"));
    ({ browser, page, problems, dialogs } = await launchWatchedChromium(profile));
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  const shot = (name: string): Promise<void> => shotTo(page, ARTIFACTS, name);
  const expectChart = (): Promise<void> => expectDrawnChart(page);

  it("logs in, renders every page with data and charts, downloads the CSV, refuses a post without the token", async () => {
    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await shot("login");
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    expect(await page.textContent("h1")).toBe("Fleet overview");
    expect(await page.textContent("header .who")).toContain("mia (manager)");
    expect(await page.textContent("main")).toContain("units online");
    expect(await page.textContent("main")).toMatch(/Sales this week[\s\S]*DKK/);
    await expectChart();
    await shot("overview");

    await page.goto(`${base}/units`);
    expect(await page.textContent("h1")).toBe("Units");
    // The label is shown as text, not run.
    expect(await page.textContent("main")).toContain(`Label ${XSS}`);
    await shot("units");

    for (const [name, id] of [
      ["unit-lobby", UNITS.lobby],
      ["unit-evil", UNITS.evil],
    ] as const) {
      await page.goto(`${base}/units/${encodeURIComponent(id)}`);
      expect(await page.textContent("h1")).toBe(`Unit ${id}`);
      expect(await page.textContent("main")).toContain("Recent vends");
      await expectChart();
      await shot(name);
    }

    const { from, to } = seededRange();
    await page.goto(`${base}/sales?from=${from}&to=${to}`);
    expect(await page.textContent("h1")).toBe("Sales");
    expect(await page.textContent("main")).toContain("Per product (item)");
    await shot("sales");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("a.csv[href*='group=unit']"),
    ]);
    expect(download.suggestedFilename()).toBe(`sales-unit-${from}-${to}.csv`);
    const csvPath = join(ARTIFACTS, download.suggestedFilename());
    await download.saveAs(csvPath);
    const csv = readFileSync(csvPath, "utf8");
    expect(csv.split("\r\n")[0]).toBe(
      "unit,currency,sessions,sales,captured,refunded,net,vends_ok,vends_failed",
    );
    expect(csv).toContain("u-lobby,DKK,60,60,1500.00,25.00,1475.00,60,0");
    expect(csv).toContain(`"'=HYPERLINK(`);

    await page.goto(`${base}/bundles`);
    expect(await page.textContent("h1")).toBe("Bundles");
    expect(await page.textContent("main")).toContain("rolledBack");
    await shot("bundles");

    // The manager approves the pending unit through the page's form (which carries the CSRF token).
    await page.goto(`${base}/units`);
    await Promise.all([page.waitForURL(/\/units\/pending/), page.click("form[action$='/approve'] button")]);
    const approved = await fleet.ctx.db
      .selectFrom("units")
      .select("status")
      .where("id", "=", UNITS.pending)
      .executeTakeFirst();
    expect(approved?.status).toBe("approved");

    // Chromium reports the navigation that turned into the download as aborted: that one is expected.
    const downloadAbort = `request failed: ${download.url()} net::ERR_ABORTED`;
    expect(problems.filter((p) => p !== downloadAbort)).toEqual([]);
    expect(dialogs).toEqual([]);

    // A post without the token, from the page itself (same origin, with the session cookie): refused.
    const status = await page.evaluate(async (id) => {
      const r = await fetch(`/units/${encodeURIComponent(id)}/revoke`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "",
      });
      await r.text();
      return r.status;
    }, UNITS.lobby);
    expect(status).toBe(403);
    const lobby = await fleet.ctx.db
      .selectFrom("units")
      .select("status")
      .where("id", "=", UNITS.lobby)
      .executeTakeFirst();
    expect(lobby?.status).toBe("approved");
    problems.length = 0; // the refused post's 403 is expected

    await Promise.all([page.waitForURL(`${base}/login`), page.click("header form button")]);
    await page.goto(`${base}/units`);
    expect(new URL(page.url()).pathname).toBe("/login");
    expect(problems).toEqual([]);
  }, 30_000);

  it("renders reconciliation, plans, members, usage, companies and invoices; a manager cancels an invoice", async () => {
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    const visits: [string, string, RegExp][] = [
      ["reconcile", "/reconcile", /^Reconciliation$/],
      ["reconcile-run", `/reconcile/${fleet.runId}`, /^Reconciliation 2026-11-24$/],
      [
        "reconcile-lines",
        `/reconcile/${fleet.runId}/lines?day=2026-11-24&all=1`,
        /^Reconciliation 2026-11-24$/,
      ],
      ["plans", "/plans", /^Plans$/],
      ["members", "/plans/members", /^Members$/],
      ["member", `/plans/members/${fleet.memberId}`, /^Ada Lovelace$/],
      ["usage", "/plans/usage", /^Plan usage \d{4}-\d{2}$/],
      ["companies", "/companies", /^Companies$/],
      ["invoices", "/invoices", /^Invoices$/],
      ["invoice", `/invoices/${fleet.invoiceId}`, /^Invoice 1 · Acme/],
      ["bundle-upload", "/bundles/upload", /^Upload a bundle$/],
    ];
    for (const [name, path, h1] of visits) {
      await page.goto(`${base}${path}`);
      expect(new URL(page.url()).pathname, path).toBe(path.split("?")[0]);
      expect((await page.textContent("h1"))?.trim(), path).toMatch(h1);
      expect(await page.$$eval("header nav a", (as) => as.map((a) => a.getAttribute("href")))).toEqual(
        expect.arrayContaining([
          "/reconcile",
          "/plans",
          "/plans/members",
          "/plans/usage",
          "/companies",
          "/invoices",
        ]),
      );
      await shot(name);
    }
    // Seeded `<script>` text in a line's reason and a company's name stays text.
    await page.goto(`${base}/reconcile/${fleet.runId}/lines`);
    expect(await page.textContent("main")).toContain(`not in the report ${XSS}`);
    await page.goto(`${base}/invoices/${fleet.invoiceId}`);
    await Promise.all([
      page.waitForURL(`${base}/invoices/${fleet.invoiceId}`),
      page.click("form[action$='/cancel'] button"),
    ]);
    expect(await page.textContent("main")).toContain("Status cancelled");
    expect(fleet.cancelled).toEqual(["remote-1"]);
    await shot("invoice-cancelled");
    expect(problems).toEqual([]);
    expect(dialogs).toEqual([]);
  }, 30_000);
});
