/**
 * Issue 31, defect 4: every page of the dashboard is reachable by following links from the menu. Headless
 * Chromium logs in (as a manager, then as a viewer), follows every same-origin link breadth first from the
 * overview, and must reach every unit, member (a subscriber and a company member), invoice and
 * reconciliation run of the seeded fleet, with no HTTP error, console error or failed request on the way.
 *
 * Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoicesDb } from "../../src/fleet/invoices/store/invoices.js";
import { launchWatchedChromium, requireChromium, type WatchedBrowser } from "../support/browser.js";
import { type ComposedFleet, startComposedFleet } from "../support/fleetCompose.js";
import { MANAGER, NOW, VIEWER } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-browser-links");
const SUBSCRIBER = "mem-subscriber-1";

/** Links not to follow: leaving the dashboard, downloads, static files. */
function followable(url: URL, base: URL): boolean {
  if (url.origin !== base.origin) return false;
  const p = url.pathname;
  return !(p === "/logout" || p.endsWith(".csv") || p.startsWith("/static/") || p.startsWith("/api/"));
}

describe("fleet dashboard: every page reachable from the menu (Chromium)", () => {
  let fleet: ComposedFleet;
  let base: string;
  const profiles: string[] = [];
  const browsers: WatchedBrowser[] = [];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    fleet = await startComposedFleet();
    // A member who pays for themselves (a subscriber), next to the seed's company member.
    await fleet.ctx.db
      .insertInto("members")
      .values({
        id: SUBSCRIBER,
        plan_id: fleet.planId,
        status: "active",
        name: "Grace Hopper",
        phone: "4512345678",
        badge_hash: "x".repeat(43),
        company_id: null,
        agreement_id: "agr-1",
        agreement_status: "Accepted",
        landing_url: null,
        grace_until: null,
        reason: "",
        created_at: NOW - 86_400_000,
        activated_at: NOW - 86_400_000,
        updated_at: NOW - 86_400_000,
      })
      .execute();
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
  }, 30_000);

  afterAll(async () => {
    for (const b of browsers) await b.browser.close();
    await fleet?.close();
    for (const p of profiles) rmSync(p, { recursive: true, force: true });
  });

  /** The detail pages the seeded fleet has: one per unit, member, invoice and reconciliation run. */
  async function detailPages(): Promise<string[]> {
    const db = fleet.ctx.db;
    const units = await db.selectFrom("units").select("id").execute();
    const members = await db.selectFrom("members").select("id").execute();
    const invoices = await invoicesDb(fleet.ctx).selectFrom("invoices").select("id").execute();
    const runs = await db.selectFrom("recon_runs").select("id").execute();
    return [
      ...units.map((u) => `/units/${encodeURIComponent(u.id)}`),
      ...members.map((m) => `/plans/members/${encodeURIComponent(m.id)}`),
      ...invoices.map((i) => `/invoices/${encodeURIComponent(i.id)}`),
      ...runs.map((r) => `/reconcile/${r.id}`),
    ];
  }

  async function crawl(user: { username: string; password: string }): Promise<Set<string>> {
    const profile = mkdtempSync(join(tmpdir(), "vendd-chromium-"));
    profiles.push(profile);
    const watched = await launchWatchedChromium(profile);
    browsers.push(watched);
    const { page, problems } = watched;
    const origin = new URL(base);
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", user.username);
    await page.fill("input[name=password]", user.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    const seen = new Set<string>(["/"]);
    const queue = ["/"];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      await page.goto(`${base}${next}`);
      const hrefs = await page.$$eval("a[href]", (as) => as.map((a) => a.getAttribute("href") ?? ""));
      for (const href of hrefs) {
        const url = new URL(href, page.url());
        if (!followable(url, origin)) continue;
        const key = `${url.pathname}${url.search}`;
        if (seen.has(key)) continue;
        seen.add(key);
        queue.push(key);
      }
    }
    expect(problems).toEqual([]);
    return new Set([...seen].map((k) => k.replace(/\?.*$/, "")));
  }

  it("a manager reaches every unit, member, invoice and reconciliation run by links alone", async () => {
    const reached = await crawl(MANAGER);
    const wanted = await detailPages();
    expect(wanted).toContain(`/plans/members/${SUBSCRIBER}`);
    expect(wanted).toContain(`/plans/members/${fleet.memberId}`);
    expect(wanted.filter((p) => !reached.has(p))).toEqual([]);
    for (const menu of [
      "/units",
      "/sales",
      "/bundles",
      "/reconcile",
      "/plans",
      "/plans/members",
      "/plans/usage",
    ])
      expect(reached).toContain(menu);
    for (const menu of ["/companies", "/invoices"]) expect(reached).toContain(menu);
  }, 120_000);

  it("so does a viewer", async () => {
    const reached = await crawl(VIEWER);
    const wanted = await detailPages();
    expect(wanted.filter((p) => !reached.has(p))).toEqual([]);
  }, 120_000);
});
