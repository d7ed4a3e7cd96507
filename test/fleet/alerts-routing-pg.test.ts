/**
 * Issue 42 acceptance: routing, grouping and silences with two `vendd fleet serve` processes on one
 * PostgreSQL database (started by the test), real time and real HTTP. Units of group `north` are routed to
 * their own grouped webhook and mail address; a unit silenced through `vendd fleet alerts silence add`
 * gets its changes recorded, never sent; the default receivers get nothing. Each change reaches each of its
 * receivers once, whichever process evaluates. `vendd fleet alerts ack` and `unack` work on the shared
 * database. Needs PostgreSQL's binaries and the built CLI (`npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { selfSignedCertificate } from "../../src/emulator/testing/httpsReceiver.js";
import { alertsDb } from "../../src/fleet/alerts/index.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { addToGroup } from "../../src/fleet/groups/index.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { SMTP_PASSWORD, SMTP_USER, WEBHOOK_SECRET } from "../support/alertBench.js";
import {
  type SmtpReceiver,
  startSmtp,
  startWebhook,
  type WebhookReceiver,
} from "../support/alertReceivers.js";
import { type Serve, serve, unitBeat, unitPost, untilTrue } from "../support/alertServe.js";
import { vendd } from "../support/cli.js";
import { fleetContext, type SimUnit, simUnit } from "../support/fleet.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";

/** The change ids a webhook receiver got: a grouped post's changes, or a single change. */
function changeIds(hook: WebhookReceiver): string[] {
  return hook.hooks.flatMap((h) =>
    Array.isArray(h.body.changes)
      ? (h.body.changes as { id: string }[]).map((c) => c.id)
      : [String(h.body.id)],
  );
}

describe("alert routing and silences with two fleet processes on PostgreSQL", () => {
  let pg: TestPostgres;
  let dir: string;
  let smtp: SmtpReceiver;
  let north: WebhookReceiver;
  let ops: WebhookReceiver;
  let ctx: FleetContext;
  let fdb: FleetDb;
  let cfg: string;
  const procs: Serve[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-alerts-route-pg-"));
    pg = await startPostgres();
    const url = await pg.createDatabase("alerts_routes");
    const cert = selfSignedCertificate();
    writeFileSync(join(dir, "ca.pem"), cert.cert);
    smtp = await startSmtp(cert, SMTP_USER, SMTP_PASSWORD);
    north = await startWebhook(WEBHOOK_SECRET);
    ops = await startWebhook(WEBHOOK_SECRET);
    writeFileSync(
      join(dir, "secrets.yaml"),
      `alertsSmtpPassword: ${SMTP_PASSWORD}\nalertsWebhookSecret: ${WEBHOOK_SECRET}\n`,
      { mode: 0o600 },
    );
    cfg = join(dir, "fleet.yaml");
    writeFileSync(
      cfg,
      `db: ${url}
logLevel: warn
secretsFile: secrets.yaml
alerts:
  everySeconds: 1
  leaseSeconds: 3
  startupGraceSeconds: 1
  holdOffMinutes: 0.05
  renotifyMinutes: 0
  sendTimeoutSeconds: 5
  rules:
    offline: { minutes: 0.1 }
    silent: false
    vendFailures: false
  mail: { host: 127.0.0.1, port: ${smtp.port}, username: ${SMTP_USER}, caFile: ca.pem, from: fleet@example.test, to: [ops@example.test] }
  webhooks:
    - { name: ops, url: "${ops.url}" }
    - { name: north, url: "${north.url}", group: true }
  routes:
    - { groups: [north], webhooks: [north], mail: [north@example.test] }
`,
    );
    ({ ctx, fdb } = await fleetContext(url, systemClock));
  }, 90_000);

  afterAll(async () => {
    for (const p of procs) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
    await fdb?.close();
    await smtp?.close();
    await north?.close();
    await ops?.close();
    await pg?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("each change once, to its routed receivers only; a silenced unit's changes recorded, not sent", async () => {
    procs.push(await serve(cfg), await serve(cfg));
    const units: SimUnit[] = [];
    for (const id of ["vm-n1", "vm-n2", "vm-x"]) {
      const u = simUnit(id);
      expect(await unitPost(procs[0]?.url ?? "", u.key, "/enroll", { unitId: u.id, label: id })).toBe(202);
      expect(await approveUnit(ctx, u.id, "ann")).toBe("done");
      units.push(u);
    }
    const beating = new Set(units.map((u) => u.id));
    let stop = false;
    let n = 0;
    const beats = (async () => {
      while (!stop) {
        for (const u of units) {
          const to = procs[n++ % procs.length];
          if (beating.has(u.id) && to !== undefined) await unitBeat(to.url, u.id, u.key).catch(() => 0);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    try {
      await addToGroup(ctx.db, "north", ["vm-n1", "vm-n2"]);
      const made = await vendd([
        "fleet",
        "alerts",
        "silence",
        "add",
        "--config",
        cfg,
        "--unit",
        "vm-x",
        "--for",
        "1h",
        "--by",
        "ann",
        "--reason",
        "cabling",
        "--json",
      ]);
      expect(made.code, made.stderr).toBe(0);
      const silenceId = (JSON.parse(made.stdout) as { silence: { id: string } }).silence.id;
      const listed = await vendd(["fleet", "alerts", "silence", "list", "--config", cfg]);
      expect(listed.stdout).toContain(`${silenceId}  active   silence: unit vm-x;`);
      await new Promise((r) => setTimeout(r, 2500));
      beating.clear();
      await untilTrue(() => changeIds(north).length >= 2, 30_000);
      const db = alertsDb(ctx);
      await untilTrue(
        async () =>
          (await db.selectFrom("alerts").select("id").where("state", "=", "open").execute()).length >= 3,
        30_000,
      );
      const [xAlert] = await db
        .selectFrom("alerts")
        .select("id")
        .where("unit_id", "=", "vm-x")
        .where("state", "=", "open")
        .execute();
      const ack = await vendd(["fleet", "alerts", "ack", xAlert?.id ?? "", "--by", "ann", "--config", cfg]);
      expect(ack.code, ack.stderr).toBe(0);
      const again = await vendd(["fleet", "alerts", "ack", xAlert?.id ?? "", "--by", "ann", "--config", cfg]);
      expect(again.code).toBe(1);
      const unack = await vendd([
        "fleet",
        "alerts",
        "unack",
        xAlert?.id ?? "",
        "--by",
        "ann",
        "--config",
        cfg,
      ]);
      expect(unack.code, unack.stderr).toBe(0);
      for (const u of units) beating.add(u.id);
      await untilTrue(() => changeIds(north).length >= 4, 30_000);
      await untilTrue(async () => {
        const open = await db.selectFrom("alerts").select("id").where("state", "=", "open").execute();
        return open.length === 0;
      }, 30_000);
      await untilTrue(() => smtp.mails.flatMap((m) => m.changeIds).length >= 4, 20_000);
      await new Promise((r) => setTimeout(r, 3000));

      const changes = await db
        .selectFrom("alert_changes as c")
        .innerJoin("alerts as a", "a.id", "c.alert_id")
        .select(["c.id", "c.kind", "a.unit_id", "c.silenced_by"])
        .execute();
      const northIds = changes
        .filter((c) => c.unit_id !== "vm-x")
        .map((c) => c.id)
        .sort();
      expect(northIds).toHaveLength(4); // two opened, two resolved
      expect(changeIds(north).sort()).toEqual(northIds); // each once, to the north webhook
      expect(north.hooks.every((h) => h.valid && h.type === "alert.changes")).toBe(true);
      expect(smtp.mails.every((m) => /^To:\s*north@example\.test/im.test(m.raw))).toBe(true);
      expect(smtp.mails.flatMap((m) => m.changeIds).sort()).toEqual(northIds);
      expect(ops.hooks).toEqual([]); // the defaults: nothing (north routed, vm-x silenced)
      const x = changes.filter((c) => c.unit_id === "vm-x");
      expect(x.map((c) => c.kind).sort()).toEqual(["acknowledged", "opened", "resolved", "unacknowledged"]);
      expect(
        x
          .filter((c) => c.kind === "opened" || c.kind === "resolved")
          .every((c) => c.silenced_by === silenceId),
      ).toBe(true);
      const xDeliveries = await db
        .selectFrom("alert_deliveries")
        .select("channel")
        .where(
          "change_id",
          "in",
          x.map((c) => c.id),
        )
        .execute();
      expect(xDeliveries).toEqual([]);
      const ended = await vendd([
        "fleet",
        "alerts",
        "silence",
        "end",
        silenceId,
        "--by",
        "ann",
        "--config",
        cfg,
      ]);
      expect(ended.code, ended.stderr).toBe(0);
      const none = await vendd(["fleet", "alerts", "silence", "list", "--config", cfg]);
      expect(none.stdout).toBe("no current silences\n");
    } finally {
      stop = true;
      await beats;
    }
  }, 180_000);
});
