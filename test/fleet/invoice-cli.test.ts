/**
 * `vendd fleet invoice preview|run` (issue 43), the built CLI as a process on a fleet database file with a
 * company, its unit's November sales and its catalogue: the preview prints the articles and the total (and
 * the whole preview with --json) and stores nothing; a month that has not ended, a config without the
 * invoice service for `run`, and a missing --company are refused with what to do. The make-and-send itself
 * is the dashboard's run now (test/fleet/invoice-run-browser.test.ts), the same code.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { invoicesDb, setProduct } from "../../src/fleet/invoices/index.js";
import { vendd } from "../support/cli.js";
import { seedComposed } from "../support/fleetCompose.js";
import { NOW, openTestFleet, seed } from "../support/fleetDashboard.js";

describe("vendd fleet invoice preview|run", () => {
  let dir: string;
  let config: string;
  let company: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-invoice-cli-"));
    const file = join(dir, "fleet.db");
    const { db, ctx } = await openTestFleet(file, new ManualClock(NOW));
    await seed(ctx);
    await seedComposed(ctx);
    for (const item of [10, 11, 12])
      await setProduct(ctx, { item, name: `Coffee ${item}`, vatBp: 2500, price: 2500 });
    const c = await invoicesDb(ctx).selectFrom("companies").select("id").executeTakeFirstOrThrow();
    company = c.id;
    await db.close();
    config = join(dir, "fleet.yaml");
    writeFileSync(config, `db: ${file}\ntimeZone: Europe/Oslo\n`);
  }, 60_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("previews November's invoice without storing it; refuses what it cannot do, saying why", async () => {
    const args = ["--config", config, "--company", company, "--month", "2026-11"];
    const p = await vendd(["fleet", "invoice", "preview", ...args]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(
      /^Acme .* 2026-11: preview \(nothing stored or sent\), issued \d{4}-\d{2}-\d{2}, due /,
    );
    expect(p.stdout).toMatch(/^1[012] +Coffee 1[012] +\d+ +25\.00 +25 % /m);
    const total = /^total (\d+\.\d{2}) DKK \(net /m.exec(p.stdout)?.[1];
    expect(total).toBeDefined();

    const j = await vendd(["fleet", "invoice", "preview", ...args, "--json"]);
    expect(j.code, j.stderr).toBe(0);
    const preview = JSON.parse(j.stdout) as {
      existing: unknown;
      bill: { kind: string; built: { total: number } };
    };
    expect(preview.existing).toBeNull();
    expect(preview.bill.kind).toBe("built");
    expect((preview.bill.built.total / 100).toFixed(2)).toBe(total);

    const { db, ctx } = await openTestFleet(join(dir, "fleet.db"), new ManualClock(NOW));
    try {
      const stored = await invoicesDb(ctx).selectFrom("invoices").select("month").execute();
      expect(stored.map((r) => r.month)).toEqual(["2026-10"]); // the seeded one only
    } finally {
      await db.close();
    }

    const future = await vendd([
      "fleet",
      "invoice",
      "preview",
      "--config",
      config,
      "--company",
      company,
      "--month",
      "2099-01",
    ]);
    expect(future.code).toBe(1);
    expect(future.stderr).toMatch(/month 2099-01 has not ended .*: only a finished month is invoiced/);
    const noService = await vendd(["fleet", "invoice", "run", ...args]);
    expect(noService.code).toBe(2);
    expect(noService.stderr).toContain("the fleet config has no invoices section: nothing can be sent");
    const noCompany = await vendd(["fleet", "invoice", "preview", "--config", config, "--month", "2026-11"]);
    expect(noCompany.code).toBe(2);
    expect(noCompany.stderr).toMatch(/--company/);
  }, 60_000);
});
