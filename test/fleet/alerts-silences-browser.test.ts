/**
 * Issue 42: the silences page and un-acknowledge in headless Chromium. A manager goes from the alerts page
 * to the silences page, makes a silence through the form (a hostile reason stays text), is told what is
 * wrong with a refused one (nothing saved), edits it, ends it (it moves to the expired list), acknowledges
 * an alert and takes the acknowledgement back; a post without the CSRF token is refused. A viewer reads the
 * page without any form. Screenshots go to test-artifacts/fleet-alerts/. Needs Debian's `chromium`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertEvaluator, alertSettings, alertsDb, listAlerts } from "../../src/fleet/alerts/index.js";
import { listSilences } from "../../src/fleet/alerts/silenceStore.js";
import { launchWatchedChromium, requireChromium, shot as shotTo } from "../support/browser.js";
import { type ComposedFleet, startComposedFleet } from "../support/fleetCompose.js";
import { MANAGER, UNITS, VIEWER, XSS } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-alerts");

describe("silences page and un-acknowledge in Chromium", () => {
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

  async function login(who: { username: string; password: string }) {
    await browser.clearCookies();
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", who.username);
    await page.fill("input[name=password]", who.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
  }

  it("makes, refuses, edits and ends silences; un-acknowledges; a viewer only reads", async () => {
    const db = alertsDb(fleet.ctx);
    await login(MANAGER);
    await page.goto(`${base}/alerts`);
    await Promise.all([page.waitForURL(`${base}/alerts/silences`), page.click("#silences-link")]);
    expect(await page.textContent("h1")).toBe("Silences and maintenance windows");

    // Refused: nothing to match. The page says why and keeps what was typed.
    await page.fill("form.silence-new input[name=for]", "2h");
    await page.fill("form.silence-new input[name=reason]", XSS);
    await page.click("form.silence-new button");
    await page.waitForSelector("p.error");
    expect(await page.textContent("p.error")).toContain("say what to silence");
    expect(await page.inputValue("form.silence-new input[name=reason]")).toBe(XSS);
    expect(await listSilences(db, fleet.clock.now())).toEqual([]);

    await page.fill("form.silence-new input[name=unit]", UNITS.evil);
    await page.selectOption("form.silence-new select[name=rule]", "offline");
    await Promise.all([page.waitForURL(`${base}/alerts/silences`), page.click("form.silence-new button")]);
    const row = await page.textContent("#silences tbody tr");
    expect(row).toContain(UNITS.evil);
    expect(row).toContain(XSS); // shown as text
    expect(row).toContain("active");
    expect(row).toContain(MANAGER.username);
    await shotTo(page, ARTIFACTS, "silences");

    await page.fill("#silences form.edit input[name=reason]", "modem swap");
    await page.fill("#silences form.edit input[name=for]", "30m");
    await Promise.all([page.waitForURL(`${base}/alerts/silences`), page.click("#silences form.edit button")]);
    expect(await page.textContent("#silences tbody tr")).toContain("modem swap");
    expect(await page.textContent("#silences tbody tr")).toContain(`changed by ${MANAGER.username}`);
    const [made] = await listSilences(db, fleet.clock.now());
    expect(made?.endsAt).toBe((made?.startsAt ?? 0) + 30 * 60_000);

    await Promise.all([page.waitForURL(`${base}/alerts/silences`), page.click("#silences form.end button")]);
    expect(await page.$("#silences-none")).not.toBeNull();
    expect(await page.textContent("#silences-expired tbody tr")).toContain("modem swap");

    const token = await page.evaluate(async () => {
      const r = await fetch("/alerts/silences", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "rule=offline&for=1h&reason=x",
      });
      await r.text();
      return r.status;
    });
    expect(token).toBe(403);
    expect(await listSilences(db, fleet.clock.now(), "current")).toEqual([]);

    // Acknowledge, then take it back.
    await page.goto(`${base}/alerts?unit=${encodeURIComponent(UNITS.evil)}&rule=offline`);
    await Promise.all([page.waitForURL(`${base}/alerts`), page.click("#alerts tbody tr form.ack button")]);
    await page.goto(`${base}/alerts?state=acknowledged`);
    await Promise.all([
      page.waitForURL(`${base}/alerts?state=acknowledged`),
      page.click("#alerts tbody tr form.unack button"),
    ]);
    expect(await page.$("#no-alerts")).not.toBeNull();
    const [offline] = await listAlerts(db, { unit: UNITS.evil, rule: "offline" });
    expect(offline?.state).toBe("open");
    const kinds = await db
      .selectFrom("alert_changes")
      .select(["kind", "actor"])
      .where("alert_id", "=", offline?.id ?? "")
      .where("actor", "is not", null)
      .orderBy("at")
      .execute();
    expect(kinds).toEqual([
      { kind: "acknowledged", actor: MANAGER.username },
      { kind: "unacknowledged", actor: MANAGER.username },
    ]);

    // A viewer reads the page, with no form to make, edit or end anything.
    await login(VIEWER);
    await page.goto(`${base}/alerts/silences`);
    expect(await page.textContent("#silences-expired")).toContain("modem swap");
    expect(await page.$$("form[method=post]")).toHaveLength(1); // the layout's log-out form only
    await shotTo(page, ARTIFACTS, "silences-viewer");
    // Only the two refusals this test made: the form's 400 and the token-less post's 403.
    expect(problems.filter((x) => x.startsWith("HTTP"))).toEqual([
      `HTTP 400: ${base}/alerts/silences`,
      `HTTP 403: ${base}/alerts/silences`,
    ]);
    expect(problems.filter((x) => !x.startsWith("HTTP") && !/status of (400|403)/.test(x))).toEqual([]);
    expect(dialogs).toEqual([]);
  }, 60_000);
});
