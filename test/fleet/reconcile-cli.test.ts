/**
 * `vendd fleet reconcile` (issue 17), the built command against the in-process emulator: a clean day exits 0
 * with the table; a day with an unknown transaction exits 1 (csv and json name its unit); the rotated refresh
 * token is written back to the secrets file; no secret reaches stdout or stderr; usage errors exit 2.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  consentRefreshToken,
  EPOCH,
  emulatorEndpoints,
  insertSales,
  seedDay,
} from "../../scripts/reconcileDay.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { vendd } from "../support/cli.js";

describe("vendd fleet reconcile", () => {
  let emu: Emulator;
  let dir: string;
  let secretsPath: string;
  let firstRefresh: string;
  const args = () => ["--db", join(dir, "fleet.db"), "--reporting", join(dir, "reporting.yaml")];
  /** `vendd fleet reconcile --from <from> --to <to> <rest>`. */
  const reconcile = (from: string, to: string, ...rest: string[]) =>
    vendd(["fleet", "reconcile", "--from", from, "--to", to, ...rest]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-recon-"));
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse("2026-11-24T00:00:00Z") });
    const day1 = seedDay(emu, { vends: 300, units: 6, stepMs: 60_000 });
    emu.reporting.advanceToCutoff();
    const day2 = seedDay(emu, { vends: 50, units: 6, stepMs: 60_000, firstSeq: 1001 });
    emu.recordLedger({
      interface: "v10",
      merchant: emu.info.v10.merchantVat,
      point: emu.info.v10.storeId,
      id: "pay-unknown",
      paymentId: null,
      orderId: `vm2-${EPOCH}-77777`,
      kind: "captured",
      amount: 2500,
    });
    emu.reporting.advanceToCutoff();
    const fleet = await openFleetDb(join(dir, "fleet.db"));
    await insertSales(fleet.db, [...day1.rows, ...day2.rows]);
    await fleet.close();
    firstRefresh = await consentRefreshToken(emu);
    secretsPath = join(dir, "reporting.secrets.yaml");
    writeFileSync(
      secretsPath,
      `clientSecret: ${emu.info.reporting.clientSecret}\nrefreshToken: ${firstRefresh}\n`,
      { mode: 0o600 },
    );
    const { baseUrl, tokenUrl } = emulatorEndpoints(emu);
    writeFileSync(
      join(dir, "reporting.yaml"),
      `baseUrl: ${baseUrl}\ntokenUrl: ${tokenUrl}\nclientId: ${emu.info.reporting.clientId}\nsecretsFile: reporting.secrets.yaml\ntimeZone: UTC\n`,
    );
  }, 30_000);
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a clean day exits 0 with the table; the rotated refresh token is stored", async () => {
    const r = await reconcile("2026-11-24", "2026-11-24", ...args());
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/everything reconciles/);
    expect(r.stdout).toMatch(/matched 300/);
    expect(r.stdout).toMatch(/difference/);
    const secrets = readFileSync(secretsPath, "utf8");
    expect(secrets).not.toContain(firstRefresh);
    expect(secrets).toContain(emu.info.reporting.clientSecret);
    for (const out of [r.stdout, r.stderr]) {
      expect(out).not.toContain(emu.info.reporting.clientSecret);
      expect(out).not.toContain(firstRefresh);
    }
  });

  it("an unknown transaction exits 1 and names its unit (csv and json)", async () => {
    const csv = await reconcile("2026-11-25", "2026-11-25", "--format", "csv", ...args());
    expect(csv.code).toBe(1);
    const unknown = csv.stdout.split("\r\n").filter((l) => l.includes(",unknownInFleet,"));
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toContain(`,vm2,,vm2-${EPOCH}-77777,`);
    const json = await reconcile("2026-11-25", "2026-11-25", "--format", "json", ...args());
    expect(json.code).toBe(1);
    const body = JSON.parse(json.stdout) as { clean: boolean; counts: Record<string, number>; runId: number };
    expect(body).toMatchObject({ clean: false, counts: { matched: 50, unknownInFleet: 1 } });
    expect(body.runId).toBeGreaterThan(1);
  });

  it("usage errors exit 2; a missing settings file exits 1", async () => {
    expect((await reconcile("2026-11-31", "2026-12-01")).code).toBe(2);
    expect((await vendd(["fleet", "reconcile", "--from", "2026-11-24"])).code).toBe(2);
    const r = await reconcile("2026-11-24", "2026-11-24", "--reporting", join(dir, "none.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/none\.yaml: ENOENT/);
    const nodb = await reconcile(
      "2026-11-24",
      "2026-11-24",
      "--reporting",
      join(dir, "reporting.yaml"),
      "--db",
      join(dir, "missing.db"),
    );
    expect(nodb.code).toBe(1);
    expect(nodb.stderr).toMatch(/fleet database .*missing\.db: no such file/);
  });
});
