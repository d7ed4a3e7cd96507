/**
 * The units list on the dashboard and `vendd fleet units` agree (issue 43). A unit whose last heartbeat
 * reported 40 events not yet sent up to seq 140, of which the fleet has since committed up to 120: both show
 * a backlog of 20 (before, the CLI printed the heartbeat's stale 40 and the dashboard 20). Versions come from
 * the heartbeat (`vendd 0.9.1`, config "as installed") instead of "–"; the unit page shows its heartbeat,
 * faults and version changes in words, never raw JSON; counts of one are singular ("1 unit online").
 *
 * From outside: the dashboard in Chromium (/usr/bin/chromium, `.ci/run` installs it), the built CLI as a
 * process (`npm run build`) on the same SQLite file. Screenshots: test-artifacts/fleet-units-agree/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Heartbeat } from "../../src/core/fleetWire.js";
import { addUser } from "../../src/fleet/web/accounts.js";
import { launchWatchedChromium, requireChromium, shot as shotTo } from "../support/browser.js";
import { vendd } from "../support/cli.js";
import { type Fleet, MANAGER, NOW, startFleet } from "../support/fleetDashboard.js";

const ARTIFACTS = join("test-artifacts", "fleet-units-agree");
const UNIT = "vm-0042";

describe("units list: dashboard and vendd fleet units agree", () => {
  let dir: string;
  let db: string;
  let fleet: Fleet;
  let base: string;
  let browser: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    dir = mkdtempSync(join(tmpdir(), "vendd-units-agree-"));
    db = join(dir, "fleet.db");
    fleet = await startFleet(db, { seed: false });
    const { ctx } = fleet;
    const heartbeat: Heartbeat = {
      unitId: UNIT,
      at: NOW - 30_000,
      state: "inService",
      reason: "",
      versions: { vendd: "0.9.1", config: null, release: null },
      backlog: { events: 40, oldestAt: NOW - 120_000, lastSeq: 140 },
      journal: { ok: true, detail: "ok" },
      vmc: "up",
      payment: "up",
      unresolved: 1,
      fleet: null,
    };
    await ctx.db
      .insertInto("units")
      .values({
        id: UNIT,
        public_key: "pk-vm-0042",
        fingerprint: "fp:vm-0042",
        label: "Canteen",
        status: "approved",
        enrolled_at: NOW - 86_400_000,
        decided_by: MANAGER.username,
        decided_at: NOW - 86_000_000,
        committed_seq: 120,
        last_seen_at: NOW - 30_000,
        last_heartbeat: JSON.stringify(heartbeat),
        config_version: null,
        release_version: null,
        backlog_events: 40,
        backlog_oldest_at: NOW - 120_000,
        unresolved: 1,
      })
      .execute();
    await ctx.db
      .insertInto("events")
      .values([
        {
          unit_id: UNIT,
          seq: 118,
          at: NOW - 600_000,
          kind: "fault",
          data: JSON.stringify({ code: "vmcLink", state: "raised", message: "VMC link lost" }),
          received_at: NOW - 590_000,
        },
        {
          unit_id: UNIT,
          seq: 119,
          at: NOW - 500_000,
          kind: "version",
          data: JSON.stringify({
            kind: "release",
            bundleId: "rel-1.5.0",
            version: "1.5.0",
            outcome: "rolledBack",
            reason: "health gate failed",
          }),
          received_at: NOW - 490_000,
        },
      ])
      .execute();
    await addUser(ctx.db, MANAGER.username, MANAGER.password, "manager", NOW);
    base = await fleet.app.listen({ host: "127.0.0.1", port: 0 });
    ({ browser, page, problems } = await launchWatchedChromium(join(dir, "chromium")));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const shot = (name: string): Promise<void> => shotTo(page, ARTIFACTS, name);

  it("shows the same backlog and versions in both, the unit page in words, and one unit as '1 unit'", async () => {
    const cli = await vendd(["fleet", "units", "--db", db, "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    const listed = (JSON.parse(cli.stdout) as { units: Record<string, unknown>[] }).units;
    expect(listed).toEqual([
      expect.objectContaining({ id: UNIT, backlog_events: 20, vendd_version: "0.9.1", unresolved: 1 }),
    ]);
    const table = await vendd(["fleet", "units", "--db", db]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^UNIT .*CONFIG +RELEASE +BACKLOG/m);
    expect(table.stdout).toMatch(
      new RegExp(`^${UNIT} +approved .* as installed +vendd 0\\.9\\.1 +20 +Canteen$`, "m"),
    );

    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    const overview = (await page.textContent("main")) ?? "";
    expect(overview).toMatch(/1\s*unit online/);
    expect(overview).toMatch(/0\s*units offline/);
    expect(overview).toMatch(/1\s*unit needing a look/);
    expect(overview).not.toMatch(/\b1\s*units\b/);
    await shot("overview");

    await page.goto(`${base}/units`);
    const row = page.locator("main table tr", { hasText: UNIT });
    const cells = (await row.locator("td").allTextContents()).map((t) => t.trim());
    // Unit, Label, State, Last seen, Config, Release, Backlog, Unresolved, Needs a look
    expect(cells.slice(4, 9)).toEqual(["as installed", "vendd 0.9.1", "20", "1", "1 unresolved session"]);
    expect(cells.join(" ")).not.toContain("–");
    await shot("units");

    await page.goto(`${base}/units/${UNIT}`);
    // What the page shows: the rendered text, without the chart's JSON data block (not shown text).
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's rendered text is the point here
    const main = await page.innerText("main");
    expect(main).toContain("config as installed, release vendd 0.9.1");
    expect(main).toContain("20 events");
    expect(main).toContain("vmcLink raised: VMC link lost");
    expect(main).toContain("release 1.5.0 rolled back (bundle rel-1.5.0): health gate failed");
    expect(main).toContain("40 events not yet sent; last seq 140");
    expect(main).not.toMatch(/[{}"]/);
    expect(await page.locator("main pre").count()).toBe(0);
    await shot("unit");
    expect(problems).toEqual([]);
  }, 60_000);
});
