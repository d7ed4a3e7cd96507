/**
 * Issue 37: the alerts page in headless Chromium. The composed fleet's seeded units (one labelled with a
 * `<script>`) are evaluated; a manager logs in, sees the overview's alert counts, the open alerts with the
 * hostile label shown as text (no dialog, no console error), filters by unit and by rule, acknowledges one
 * through the form (CSRF token), sees who acknowledged it, and a post without the token is refused.
 * Screenshots go to test-artifacts/fleet-alerts/. Needs Debian's `chromium`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertEvaluator, alertSettings, alertsDb, listAlerts } from "../../src/fleet/alerts/index.js";
import { launchWatchedChromium, requireChromium, shot as shotTo } from "../support/browser.js";
import { type ComposedFleet, startComposedFleet } from "../support/fleetCompose.js";
import { MANAGER, UNITS, XSS } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-alerts");

describe("alerts page in Chromium", () => {
  let fleet: ComposedFleet;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  let problems: string[];
  let dialogs: string[];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    fleet = await startComposedFleet();
    const ev = alertEvaluator(fleet.ctx, alertSettings({ startupGraceSeconds: 0 }), {
      startedAt: fleet.clock.now() - 3_600_000,
    });
    await ev.run();
    await ev.close();
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
    profile = mkdtempSync(join(tmpdir(), "vendd-chromium-"));
    ({ browser, page, problems, dialogs } = await launchWatchedChromium(profile));
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  it("lists, filters and acknowledges alerts; labels stay text; a post without the token is refused", async () => {
    const evil = (await listAlerts(alertsDb(fleet.ctx), { unit: UNITS.evil })).map((a) => a.rule).sort();
    expect(evil).toEqual(["offline", "rollout", "stuckMoney"]); // the seed: last seen an hour ago, 2 unresolved, a rollback

    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    const counts = await page.textContent("#alert-counts");
    expect(counts).toMatch(/\d+open alerts \(0 acknowledged\)/);

    await page.click("nav a[href='/alerts']");
    await page.waitForURL(`${base}/alerts`);
    expect(await page.textContent("h1")).toBe("Alerts");
    expect(await page.textContent("#alerts")).toContain(`Label ${XSS}`);
    await shotTo(page, ARTIFACTS, "alerts");

    await page.fill("input[name=unit]", UNITS.evil);
    await page.selectOption("select[name=rule]", "stuckMoney");
    await Promise.all([page.waitForURL(/\/alerts\?/), page.click("form.filter button")]);
    const rows = await page.$$eval("#alerts tbody tr", (trs) => trs.map((tr) => tr.textContent ?? ""));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain("Stuck money");
    expect(rows[0]).toContain(UNITS.evil);

    await Promise.all([page.waitForURL(`${base}/alerts`), page.click("#alerts tbody tr form button")]);
    await page.selectOption("select[name=state]", "acknowledged");
    await Promise.all([page.waitForURL(/state=acknowledged/), page.click("form.filter button")]);
    const acked = await page.$$eval("#alerts tbody tr", (trs) => trs.map((tr) => tr.textContent ?? ""));
    expect(acked).toHaveLength(1);
    expect(acked[0]).toContain("mia");
    await shotTo(page, ARTIFACTS, "acknowledged");
    const audit = await alertsDb(fleet.ctx)
      .selectFrom("alert_changes")
      .select(["kind", "actor"])
      .where("kind", "=", "acknowledged")
      .execute();
    expect(audit).toEqual([{ kind: "acknowledged", actor: "mia" }]);

    expect(problems).toEqual([]);
    expect(dialogs).toEqual([]);

    const [offline] = await listAlerts(alertsDb(fleet.ctx), { unit: UNITS.evil, rule: "offline" });
    const status = await page.evaluate(async (id) => {
      const r = await fetch(`/alerts/${id}/ack`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "",
      });
      await r.text();
      return r.status;
    }, offline?.id ?? "");
    expect(status).toBe(403);
    const still = await listAlerts(alertsDb(fleet.ctx), { unit: UNITS.evil, rule: "offline" });
    expect(still[0]?.state).toBe("open");
  }, 60_000);
});
