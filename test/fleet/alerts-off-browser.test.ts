/**
 * Issue 42, alerts defect 5: with alerting off, every alerts link on the dashboard leads to a page (no
 * 404; `/alerts?state=open` from the overview's counts was one on the dashboard `vendd fleet demo` serves)
 * and that page says alerting is off and how to turn it on. Headless Chromium on the dashboard's own pages
 * (registerFleetDashboard, no alerts section), logged in as a manager. Needs Debian's `chromium`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchWatchedChromium, requireChromium, type WatchedBrowser } from "../support/browser.js";
import { type Fleet, MANAGER, startFleet } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-alerts-off");

describe("alerting off: every alerts link works and says so (Chromium)", () => {
  let fleet: Fleet;
  let base: string;
  let profile: string;
  let watched: WatchedBrowser;

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    fleet = await startFleet();
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
    profile = mkdtempSync(join(tmpdir(), "vendd-chromium-"));
    watched = await launchWatchedChromium(profile);
  }, 30_000);

  afterAll(async () => {
    await watched?.browser.close();
    await fleet?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  it("each link to /alerts from the overview and the nav answers 200 with 'Alerting is off' and how to turn it on", async () => {
    const page = watched.page;
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    const links = await page.$$eval("a[href^='/alerts']", (as) =>
      as.map((a) => a.getAttribute("href") ?? ""),
    );
    expect(links).toEqual(expect.arrayContaining(["/alerts?state=open", "/alerts"]));
    for (const href of new Set(links)) {
      const res = await page.goto(`${base}${href}`);
      expect(res?.status(), href).toBe(200);
      const notice = await page.textContent("#alerting-off");
      expect(notice).toContain("Alerting is off");
      expect(notice).toContain("add an alerts section");
      expect(notice).toContain("docs/alerts.md");
    }
    expect(watched.problems).toEqual([]);
  }, 60_000);
});
