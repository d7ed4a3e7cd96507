/**
 * Issue 37: `vendd fleet alerts [--open] [--json]` (a real CLI process on a fleet SQLite file) shows the
 * alerts and the deliveries that fail; the `alerts` section of the fleet config with its secrets: read
 * from the secrets file, required when mail has a user or webhooks are set, refused in the main file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { alertEvaluator, alertSettings, alertsDb, listAlerts } from "../../src/fleet/alerts/index.js";
import { acknowledge } from "../../src/fleet/alerts/store.js";
import { FleetConfigError, loadFleetConfig } from "../../src/fleet/config.js";
import { vendd } from "../support/cli.js";
import { fleetContext } from "../support/fleet.js";
import { closedPort } from "../support/inprocess.js";

const NOW = Date.parse("2026-11-25T12:00:00Z");

describe("vendd fleet alerts", () => {
  let dir: string;
  let db: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-alerts-cli-"));
    db = join(dir, "fleet.db");
    const clock = new ManualClock(NOW);
    const { ctx, fdb } = await fleetContext(db, clock);
    const unit = (id: string, label: string, unresolved: number) => ({
      id,
      public_key: `key-${id}`,
      fingerprint: `fp-${id}`,
      label,
      status: "approved" as const,
      enrolled_at: NOW - 86_400_000,
      decided_by: "ann",
      decided_at: NOW - 86_400_000,
      last_seen_at: NOW - 30_000,
      last_heartbeat: JSON.stringify({ state: "inService" }),
      unresolved,
    });
    await ctx.db
      .insertInto("units")
      .values([unit("vm-1", "Lobby\u001b[31m", 1), unit("vm-2", "Gym", 2)])
      .execute();
    const port = await closedPort();
    const s = alertSettings({ webhooks: [{ name: "ops", url: `http://127.0.0.1:${port}/hook` }] });
    s.webhookSecret = "whsec-cli-test-0123456789";
    const ev = alertEvaluator(ctx, s, { startedAt: NOW - 600_000 });
    await ev.run(); // two stuck-money alerts; their webhooks fail (nothing listens)
    await ev.close();
    const [gym] = await listAlerts(alertsDb(ctx), { unit: "vm-2" });
    await acknowledge(alertsDb(ctx), gym?.id ?? "", "ann", NOW);
    await fdb.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("--json: every alert with its state and who acknowledged; the failing deliveries", async () => {
    const r = await vendd(["fleet", "alerts", "--db", db, "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      alerts: { unitId: string; rule: string; state: string; acknowledgedBy: string | null }[];
      deliveryProblems: { channel: string; state: string; attempts: number; lastError: string }[];
    };
    expect(out.alerts.map((a) => [a.unitId, a.rule, a.state, a.acknowledgedBy]).sort()).toEqual([
      ["vm-1", "stuckMoney", "open", null],
      ["vm-2", "stuckMoney", "acknowledged", "ann"],
    ]);
    expect(out.deliveryProblems).toHaveLength(2);
    expect(out.deliveryProblems[0]).toMatchObject({ channel: "webhook:ops", state: "pending", attempts: 1 });
    expect(r.stdout).not.toContain("whsec-cli-test");
  });

  it("the table: open ones with --open, control characters from a label escaped, problems listed", async () => {
    const r = await vendd(["fleet", "alerts", "--db", db, "--open"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^open\s+stuckMoney\s+vm-1/m);
    expect(r.stdout).toMatch(/^acknowledged\s+stuckMoney\s+vm-2 .*acknowledged by ann/m);
    expect(r.stdout).toContain("2 delivery problem(s)");
    expect(r.stdout).toMatch(/retrying webhook:ops/);
    expect(r.stdout).toContain("vm-1 (Lobby\\x1b[31m)"); // printable(): the escape shown, not sent
    expect(r.stdout).not.toContain("\u001b");
    const bad = await vendd(["fleet", "alerts", "--db", db, "--nope"]);
    expect(bad.code).toBe(2);
  });

  it("says alerting is off, and how to turn it on, when the config given has no alerts section", async () => {
    const cfg = join(dir, "no-alerts.yaml");
    writeFileSync(cfg, `db: ${db}\n`);
    const r = await vendd(["fleet", "alerts", "--config", cfg]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Alerting is off: ${cfg} has no alerts section`);
    expect(r.stdout).toContain("add an alerts section (see docs/alerts.md");
    const j = await vendd(["fleet", "alerts", "--config", cfg, "--json"]);
    expect(JSON.parse(j.stdout)).toMatchObject({ alerting: "off" });
  }, 40_000);
});

describe("the alerts section of the fleet config", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "vendd-alerts-cfg-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (main: string, secrets: string | null): string => {
    const p = join(dir, `fleet-${Math.random().toString(36).slice(2)}.yaml`);
    if (secrets !== null) writeFileSync(join(dir, "secrets.yaml"), secrets, { mode: 0o600 });
    writeFileSync(p, `${secrets === null ? "" : "secretsFile: secrets.yaml\n"}${main}`);
    return p;
  };
  const section = `alerts:
  holdOffMinutes: 15
  rules: { offline: { minutes: 7 }, silent: false }
  mail: { host: smtp.example.test, username: fleet, from: fleet@example.test, to: [ops@example.test], caFile: ca.pem }
  webhooks: [{ name: ops, url: "https://hooks.example.test/vendd" }]
`;

  it("reads thresholds with defaults and the secrets from the secrets file", () => {
    const cfg = loadFleetConfig(
      write(section, "alertsSmtpPassword: smtp-pw-1\nalertsWebhookSecret: 0123456789abcdef0123\n"),
      {},
    );
    const a = cfg.alerts;
    expect(a?.holdOffMinutes).toBe(15);
    expect(a?.renotifyMinutes).toBe(240);
    expect(a?.rules.offline).toEqual({ minutes: 7 });
    expect(a?.rules.silent).toBe(false);
    expect(a?.rules.backlog).toEqual({ events: 500, ageMinutes: 60 });
    expect(a?.mail).toMatchObject({
      port: 587,
      security: "starttls",
      password: "smtp-pw-1",
      caFile: join(dir, "ca.pem"),
    });
    expect(a?.webhookSecret).toBe("0123456789abcdef0123");
    expect(cfg.secrets).toEqual(expect.arrayContaining(["smtp-pw-1", "0123456789abcdef0123"]));
  });

  it("refuses a missing secret (naming it) and a secret in the main file", () => {
    expect(() => loadFleetConfig(write(section, "alertsSmtpPassword: smtp-pw-1\n"), {})).toThrow(
      /alerts.webhooks needs the secret alertsWebhookSecret/,
    );
    const leaked = section.replace("username: fleet,", "username: fleet, password: hunter2-hunter2,");
    try {
      loadFleetConfig(write(leaked, null), {});
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(FleetConfigError);
      expect(String(e)).toContain("alerts.mail.password");
      expect(String(e)).not.toContain("hunter2");
    }
  });

  it("refuses a webhook on a port Node's fetch never calls, naming the port and why (config and `fleet serve`)", async () => {
    const blocked = section.replace("https://hooks.example.test/vendd", "http://127.0.0.1:6000/hook");
    const file = write(blocked, "alertsSmtpPassword: smtp-pw-1\nalertsWebhookSecret: 0123456789abcdef0123\n");
    expect(() => loadFleetConfig(file, {})).toThrow(
      /alerts\.webhooks\.0\.url.*port 6000.*Node's fetch never calls/,
    );
    const r = await vendd(["fleet", "serve", "--config", file, "--listen", "127.0.0.1:0"], {
      timeoutMs: 30_000,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/port 6000 is on the Fetch standard's list of blocked \("bad"\) ports/);
    // The ports just around it are fine (the list, not a range).
    const fine = section.replace("https://hooks.example.test/vendd", "http://127.0.0.1:6001/hook");
    expect(
      loadFleetConfig(write(fine, "alertsSmtpPassword: a\nalertsWebhookSecret: 0123456789abcdef0123\n"), {})
        .alerts?.webhooks,
    ).toHaveLength(1);
  }, 40_000);
});
