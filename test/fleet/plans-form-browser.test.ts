/**
 * Plans are created and edited on the dashboard (issue 43), in Chromium against the composed fleet server
 * (plans configured): a manager's /plans has the new-plan form; a wrong field is refused on the page with
 * what to type (422) and what was typed kept, nothing stored; a right one creates the plan. Each plan has an
 * edit link whose form comes filled in; an edit is checked the same way. A post without the session's CSRF
 * token is refused; a viewer sees no form and no edit link, and the edit page refuses them.
 *
 * Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it). Screenshots:
 * test-artifacts/fleet-plans-form/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchWatchedChromium, requireChromium, shot as shotTo } from "../support/browser.js";
import { type ComposedFleet, startComposedFleet } from "../support/fleetCompose.js";
import { MANAGER, VIEWER } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-plans-form");

describe("plans form on the dashboard in Chromium", () => {
  let fleet: ComposedFleet;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    fleet = await startComposedFleet();
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
    profile = mkdtempSync(join(tmpdir(), "vendd-chromium-plans-"));
    ({ browser, page, problems } = await launchWatchedChromium(profile));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  const shot = (name: string): Promise<void> => shotTo(page, ARTIFACTS, name);
  const plans = () => fleet.ctx.db.selectFrom("plans").selectAll().where("name", "=", "Tea club").execute();

  async function login(who: { username: string; password: string }): Promise<void> {
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", who.username);
    await page.fill("input[name=password]", who.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("form.login button[type=submit]")]);
  }

  async function submit(): Promise<void> {
    await Promise.all([page.waitForLoadState("load"), page.click(".plan-form button[type=submit]")]);
  }

  it("a manager creates and edits a plan; wrong fields are shown; no token or a viewer is refused", async () => {
    await login(MANAGER);
    await page.goto(`${base}/plans`);
    expect(await page.locator(".plan-form h2").textContent()).toBe("New plan");

    // A wrong fee: refused on the page, with the field named and the typed values kept.
    await page.fill(".plan-form input[name=name]", "Tea club");
    await page.fill(".plan-form input[name=price]", "forty");
    await page.fill(".plan-form input[name=dayItems]", "2");
    const refused = page.waitForResponse((r) => r.url() === `${base}/plans/admin/plans`);
    await submit();
    expect((await refused).status()).toBe(422);
    expect(await page.locator(".plan-form [role=alert]").textContent()).toBe(
      'monthly fee: an amount such as 99.00, not "forty"',
    );
    expect(await page.inputValue(".plan-form input[name=name]")).toBe("Tea club");
    expect(await page.inputValue(".plan-form input[name=dayItems]")).toBe("2");
    expect(await plans()).toEqual([]);
    await shot("refused");

    await page.fill(".plan-form input[name=price]", "45.00");
    await submit();
    expect(new URL(page.url()).pathname).toBe("/plans");
    const created = await plans();
    expect(created).toEqual([
      expect.objectContaining({
        price: 4500,
        currency: "DKK",
        day_items: 2,
        month_items: null,
        units: '["*"]',
      }),
    ]);
    const row = page.locator("table.plans tr", { hasText: "Tea club" });
    expect(await row.textContent()).toContain("45.00 DKK");
    await shot("created");

    // Edit: the form comes filled in; a wrong count is refused, then the edit is saved.
    await Promise.all([page.waitForURL(/\/plans\/.+\/edit$/), row.locator("a", { hasText: "Edit" }).click()]);
    expect(await page.inputValue(".plan-form input[name=price]")).toBe("45.00");
    expect(await page.inputValue(".plan-form input[name=dayItems]")).toBe("2");
    await page.fill(".plan-form input[name=monthItems]", "lots");
    await submit();
    expect(await page.locator(".plan-form [role=alert]").textContent()).toBe(
      'items per month: a whole number of items (empty: no limit), not "lots"',
    );
    expect((await plans())[0]?.month_items).toBeNull();
    await page.fill(".plan-form input[name=monthItems]", "30");
    await page.fill(".plan-form input[name=price]", "49.50");
    await page.fill(".plan-form input[name=units]", "u-lobby, u-hall");
    await submit();
    expect(new URL(page.url()).pathname).toBe("/plans");
    expect(await plans()).toEqual([
      expect.objectContaining({ price: 4950, month_items: 30, units: '["u-lobby","u-hall"]' }),
    ]);
    expect(await page.locator("table.plans tr", { hasText: "Tea club" }).textContent()).toContain(
      "49.50 DKK",
    );
    await shot("edited");

    // Without the session's token: refused, nothing changed.
    const editUrl = `/plans/${encodeURIComponent(created[0]?.id ?? "")}/edit`;
    await page.goto(`${base}${editUrl}`);
    await page.locator(".plan-form input[name=_csrf]").evaluate((el: { remove(): void }) => el.remove());
    await page.fill(".plan-form input[name=price]", "1.00");
    await submit();
    expect(await page.textContent("main")).toContain("security token is missing or stale");
    expect((await plans())[0]?.price).toBe(4950);

    // A viewer: no form, no edit link, the edit page refused.
    await page.goto(`${base}/plans`);
    await Promise.all([page.waitForURL(`${base}/login`), page.click("header form button[type=submit]")]);
    await login(VIEWER);
    await page.goto(`${base}/plans`);
    expect(await page.locator(".plan-form").count()).toBe(0);
    expect(await page.locator("table.plans a", { hasText: "Edit" }).count()).toBe(0);
    const r = await page.goto(`${base}${editUrl}`);
    expect(r?.status()).toBe(403);
    expect(problems.filter((p) => !/\b(403|422)\b/.test(p))).toEqual([]);
  }, 90_000);
});
