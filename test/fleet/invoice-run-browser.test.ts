/**
 * Company invoices "run now" with a preview (issue 43), in Chromium against the composed fleet server: a
 * manager picks a company and a finished month on /invoices, sees the invoice as the monthly run would make
 * it (articles, totals; nothing stored or sent), then makes and sends it; the invoice page shows it sent,
 * and the service got it once with the previewed total. A second preview says the invoice exists; a month
 * that has not ended is refused on the page.
 *
 * Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it). Screenshots:
 * test-artifacts/fleet-invoice-run/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoicesDb, setProduct } from "../../src/fleet/invoices/index.js";
import type { InvoiceInput } from "../../src/payment/invoices/client.js";
import { launchWatchedChromium, requireChromium, shot as shotTo } from "../support/browser.js";
import { type ComposedFleet, startComposedFleet } from "../support/fleetCompose.js";
import { MANAGER } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-invoice-run");

describe("invoice run now on the dashboard in Chromium", () => {
  let fleet: ComposedFleet;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const sent: InvoiceInput[] = [];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    fleet = await startComposedFleet();
    // A week on: November (the seeded sales) has ended.
    fleet.clock.advance(7 * 86_400_000);
    for (const item of [10, 11, 12])
      await setProduct(fleet.ctx, { item, name: `Coffee ${item}`, vatBp: 2500, price: 2500 });
    const client = fleet.services.invoices?.client as unknown as {
      sendLink(i: InvoiceInput): Promise<{ invoiceId: string; link: string | null }>;
    };
    client.sendLink = async (input) => {
      sent.push(input);
      return { invoiceId: `remote-${sent.length + 1}`, link: "https://pay.example/inv" };
    };
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
    profile = mkdtempSync(join(tmpdir(), "vendd-chromium-invoices-"));
    ({ browser, page } = await launchWatchedChromium(profile));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  const shot = (name: string): Promise<void> => shotTo(page, ARTIFACTS, name);
  const november = () =>
    invoicesDb(fleet.ctx).selectFrom("invoices").selectAll().where("month", "=", "2026-11").execute();

  it("previews a company's invoice of a finished month, then makes and sends it once", async () => {
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("form.login button[type=submit]")]);

    await page.goto(`${base}/invoices`);
    expect(await page.inputValue(".invoice-run input[name=month]")).toBe("2026-11");
    await Promise.all([page.waitForURL(/\/invoices\/run\?/), page.click(".invoice-run button[type=submit]")]);
    expect(await page.textContent("h1")).toMatch(/^Invoice preview · Acme .* · 2026-11$/);
    const rows = page.locator("table.preview tbody tr");
    expect(await rows.count()).toBeGreaterThan(0);
    expect(await rows.first().textContent()).toMatch(/Coffee 1[012]/);
    const total = ((await page.locator("table.preview tfoot th").last().textContent()) ?? "").trim();
    expect(total).toMatch(/^\d+\.\d{2}$/);
    // A preview stores and sends nothing.
    expect(await november()).toEqual([]);
    expect(sent).toEqual([]);
    await shot("preview");

    await Promise.all([
      page.waitForURL(/\/invoices\/[^/?]+$/),
      page.click("button:has-text('Make and send this invoice now')"),
    ]);
    expect(await page.textContent("h1")).toMatch(/^Invoice \d+ · Acme .* · 2026-11$/);
    expect(await page.textContent("main")).toContain("Status sent");
    const made = await november();
    expect(made).toHaveLength(1);
    expect((Number(made[0]?.total) / 100).toFixed(2)).toBe(total);
    expect(sent).toHaveLength(1);
    await shot("sent");

    // Again: the invoice exists, no second one; a month that has not ended is refused.
    await page.goto(`${base}/invoices`);
    await Promise.all([page.waitForURL(/\/invoices\/run\?/), page.click(".invoice-run button[type=submit]")]);
    expect(await page.textContent("main")).toContain("exists already");
    expect(await page.locator("button:has-text('Make and send')").count()).toBe(0);
    const company = made[0]?.company_id ?? "";
    const r = await page.goto(`${base}/invoices/run?company=${encodeURIComponent(company)}&month=2026-12`);
    expect(r?.status()).toBe(422);
    expect(await page.textContent("main [role=alert]")).toContain("month 2026-12 has not ended");
    expect(sent).toHaveLength(1);
  }, 90_000);
});
