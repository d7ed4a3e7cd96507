/**
 * Issue 37 acceptance: two `vendd fleet serve` processes on one PostgreSQL database (started by the test)
 * with alerts configured (real clock, evaluation every second): units report over real HTTP to both; each
 * change reaches the webhook receiver and the SMTP server exactly once, whichever process evaluates; and
 * when the process that is sending is SIGKILLed mid-delivery (the receiver processed the webhook but never
 * answered), the other process takes over: no change lost, and its repeat carries the same change id, which
 * the receiver drops as a duplicate. Needs PostgreSQL's binaries and the built CLI (`npm run build`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import type { UnitKeyPair } from "../../src/core/fleetAuth.js";
import { selfSignedCertificate } from "../../src/emulator/testing/httpsReceiver.js";
import { alertsDb } from "../../src/fleet/alerts/index.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { SMTP_PASSWORD, SMTP_USER, WEBHOOK_SECRET } from "../support/alertBench.js";
import {
  type SmtpReceiver,
  startSmtp,
  startWebhook,
  type WebhookReceiver,
} from "../support/alertReceivers.js";
import { CLI } from "../support/cli.js";
import { fleetContext, type SimUnit, signed, simUnit } from "../support/fleet.js";
import { heartbeat } from "../support/fleetUnitApi.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { until as waitFor } from "../support/wait.js";

/** Waits (real time) until `ok` is true. */
const until = (ok: () => boolean | Promise<boolean>, ms: number, what = "the alerts") =>
  waitFor(what, async () => ((await ok()) ? true : undefined), ms);

interface Serve {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}

async function serve(cfg: string): Promise<Serve> {
  const child = spawn(process.execPath, [CLI, "fleet", "serve", "--config", cfg, "--listen", "127.0.0.1:0"], {
    env: { ...process.env, VENDD_FAULT_POINT: "", VENDD_FLEET_DB: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`not serving: ${err}`)), 30_000);
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
  });
  return { child, url, exited };
}

async function unitPost(base: string, key: UnitKeyPair, path: string, body: unknown): Promise<number> {
  const r = signed(key, "POST", path, body, Date.now());
  const res = await fetch(`${base}${r.url}`, { method: "POST", headers: r.headers, body: r.payload ?? "" });
  await res.arrayBuffer();
  return res.status;
}

describe("alerts with two fleet processes on PostgreSQL", () => {
  let pg: TestPostgres;
  let dir: string;
  let url: string;
  let smtp: SmtpReceiver;
  let hook: WebhookReceiver;
  let ctx: FleetContext;
  let fdb: FleetDb;
  let cfg: string;
  const procs: Serve[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-alerts-pg-"));
    pg = await startPostgres();
    url = await pg.createDatabase("alerts_two");
    const cert = selfSignedCertificate();
    writeFileSync(join(dir, "ca.pem"), cert.cert);
    smtp = await startSmtp(cert, SMTP_USER, SMTP_PASSWORD);
    hook = await startWebhook(WEBHOOK_SECRET);
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
  webhooks: [{ name: ops, url: "${hook.url}" }]
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
    await hook?.close();
    await pg?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("each change once across two processes; a sender killed mid-delivery loses none, its repeat is deduplicated", async () => {
    procs.push(await serve(cfg), await serve(cfg));
    const alive = () => procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    const units: SimUnit[] = [];
    for (let i = 1; i <= 4; i++) {
      const u = simUnit(`vm-${i}`);
      expect(
        await unitPost(procs[0]?.url ?? "", u.key, "/enroll", { unitId: u.id, label: `<b>site ${i}</b>` }),
      ).toBe(202);
      expect(await approveUnit(ctx, u.id, "ann")).toBe("done");
      units.push(u);
    }
    const beating = new Set(units.map((u) => u.id));
    let stop = false;
    let n = 0;
    const beats = (async () => {
      while (!stop) {
        for (const u of units) {
          if (!beating.has(u.id)) continue;
          const to = alive()[n++ % Math.max(1, alive().length)];
          if (to !== undefined)
            await unitPost(to.url, u.key, "/heartbeat", {
              ...heartbeat(u.id),
              at: Date.now(),
              unresolved: 0,
              backlog: { events: 0, oldestAt: null, lastSeq: 0 },
            }).catch(() => 0);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 2500));
      // Phase 1: three units go silent, then come back: 3 opened + 3 resolved, each delivered once.
      for (const u of units.slice(0, 3)) beating.delete(u.id);
      await until(() => hook.ids().length >= 3, 30_000);
      for (const u of units.slice(0, 3)) beating.add(u.id);
      await until(() => hook.ids().length >= 6, 30_000);
      await new Promise((r) => setTimeout(r, 3000));
      expect(hook.hooks.map((h) => h.type).sort()).toEqual([
        ...Array(3).fill("alert.opened"),
        ...Array(3).fill("alert.resolved"),
      ]);
      expect(hook.hooks.every((h) => h.valid && !h.duplicate)).toBe(true);
      await until(() => new Set(smtp.mails.flatMap((m) => m.changeIds)).size >= 6, 20_000);
      expect(smtp.mails.flatMap((m) => m.changeIds).sort()).toEqual(hook.ids().sort());

      // Phase 2: the process sending a webhook is killed before it hears the answer.
      hook.holdNext(1);
      beating.delete("vm-4");
      await hook.held();
      const lease = await alertsDb(ctx).selectFrom("alert_lease").select("holder").executeTakeFirstOrThrow();
      const pid = Number(lease.holder.split("-")[0]);
      const sender = procs.find((p) => p.child.pid === pid);
      expect(sender).toBeDefined();
      sender?.child.kill("SIGKILL");
      await sender?.exited;
      hook.release();
      beating.add("vm-4");
      await until(() => hook.ids().length >= 8, 60_000);
      await until(async () => {
        const pending = await alertsDb(ctx)
          .selectFrom("alert_deliveries")
          .select("change_id")
          .where("state", "!=", "sent")
          .execute();
        return pending.length === 0;
      }, 30_000);
      const vm4 = hook.hooks.filter((h) => (h.body.alert as { unitId: string }).unitId === "vm-4");
      const opened = vm4.filter((h) => h.type === "alert.opened");
      expect(opened.length).toBe(2); // sent by the killed process, and again by the other one
      expect(opened[0]?.id).toBe(opened[1]?.id); // the same change id: the receiver dropped the repeat
      expect(opened[1]?.duplicate).toBe(true);
      expect(vm4.filter((h) => h.type === "alert.resolved")).toHaveLength(1);
      expect(hook.ids()).toHaveLength(8);
      const mailIds = smtp.mails.flatMap((m) => m.changeIds);
      expect(mailIds.sort()).toEqual(hook.ids().sort()); // every change mailed, none twice
      const rows = await alertsDb(ctx).selectFrom("alerts").select(["unit_id", "state"]).execute();
      expect(rows.filter((r) => r.state === "resolved")).toHaveLength(4);
      expect(rows).toHaveLength(4);
    } finally {
      stop = true;
      await beats;
    }
  }, 180_000);
});
