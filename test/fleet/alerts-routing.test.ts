/**
 * Issue 42 acceptance: silences, maintenance windows, routing and grouping, on SQLite and on PostgreSQL,
 * with an injected clock, units reporting over the signed unit API, a real SMTP server (STARTTLS, login)
 * and two real webhook receivers that verify signatures. Routes send a group's changes to its own
 * webhook (grouped: one post per evaluation) and mail address, a company's critical offline alerts to its
 * address, and the rest to the defaults; each change reaches each of its receivers once and no other.
 * A silence (by unit) and a maintenance window (by group, starting later) record changes without sending
 * them; once they end, an alert still open is sent. Un-acknowledging resumes re-notifications.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../../src/emulator/testing/httpsReceiver.js";
import { type AlertSettings, alertEvaluator, alertsDb } from "../../src/fleet/alerts/index.js";
import { createSilence, listSilences, silencedChanges } from "../../src/fleet/alerts/silenceStore.js";
import { acknowledge, unacknowledge } from "../../src/fleet/alerts/store.js";
import { addToGroup } from "../../src/fleet/groups/index.js";
import { assignUnit, createCompany } from "../../src/fleet/invoices/index.js";
import { alertBench, SMTP_PASSWORD, SMTP_USER, testSettings, WEBHOOK_SECRET } from "../support/alertBench.js";
import {
  type SmtpReceiver,
  startSmtp,
  startWebhook,
  type WebhookReceiver,
} from "../support/alertReceivers.js";
import type { SimUnit } from "../support/fleet.js";

const MIN = 60_000;

/** The recipients of a received mail (its To: header). */
const toOf = (raw: string): string => /^To:\s*(.*)$/im.exec(raw)?.[1]?.trim() ?? "";

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`alert routing, grouping and silences (${dialect})`, () => {
    const b = alertBench(dialect);
    let dir = "";
    let smtp: SmtpReceiver;
    let north: WebhookReceiver;
    let ops: WebhookReceiver;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "vendd-alerts-route-"));
      const cert = selfSignedCertificate();
      writeFileSync(join(dir, "ca.pem"), cert.cert);
      smtp = await startSmtp(cert, SMTP_USER, SMTP_PASSWORD);
      north = await startWebhook(WEBHOOK_SECRET);
      ops = await startWebhook(WEBHOOK_SECRET);
    }, 60_000);
    afterAll(async () => {
      await smtp?.close();
      await north?.close();
      await ops?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    function settings(): AlertSettings {
      return testSettings(smtp.port, join(dir, "ca.pem"), ops.url, {
        holdOffMinutes: 10,
        renotifyMinutes: 30,
        startupGraceSeconds: 0,
        digestAfter: 3,
        rules: { offline: { minutes: 5 }, silent: false, vendFailures: false, review: false, backlog: false },
        webhooks: [
          { name: "ops", url: ops.url },
          { name: "north", url: north.url, group: true },
        ],
        routes: [
          { groups: ["north"], webhooks: ["north"], mail: ["north@example.test"] },
          {
            rules: ["offline"],
            severities: ["critical"],
            companies: ["Acme AS"],
            mail: ["acme@example.test"],
          },
        ],
      });
    }

    it("routes each change to its receivers once, groups a webhook's changes, silences and un-acknowledges", async () => {
      const st = b.state();
      const ev = alertEvaluator(st.ctx, settings(), { startedAt: st.clock.now() });
      const db = alertsDb(st.ctx);
      try {
        const n1 = await b.unit("vm-n1");
        const n2 = await b.unit("vm-n2");
        const acme = await b.unit("vm-acme");
        const x = await b.unit("vm-x");
        await addToGroup(st.ctx.db, "north", ["vm-n1", "vm-n2"]);
        const company = await createCompany(st.ctx, {
          name: "Acme AS",
          orgNumber: "12345678",
          delivery: "link",
          issuerId: "0f8fad5b-d9cb-469f-a165-70867728950e",
        });
        await assignUnit(st.ctx, company, "vm-acme");
        const all = [n1, n2, acme, x];
        const step = async (minutes: number, beating: readonly SimUnit[]) => {
          for (let i = 0; i < minutes; i++) {
            st.clock.advance(MIN);
            for (const u of beating) await b.beat(u);
            await ev.run();
          }
        };

        // Phase 1: all four go offline in one evaluation, then come back.
        await step(1, all);
        await step(7, []);
        const opened = await db.selectFrom("alerts").select(["id", "unit_id"]).execute();
        expect(opened.map((a) => a.unit_id).sort()).toEqual(["vm-acme", "vm-n1", "vm-n2", "vm-x"]);
        // The grouped webhook got the north group's two changes in one signed post.
        expect(north.hooks).toHaveLength(1);
        expect(north.hooks[0]?.valid).toBe(true);
        expect(north.hooks[0]?.type).toBe("alert.changes");
        const grouped = (north.hooks[0]?.body.changes ?? []) as {
          type: string;
          alert: { unitId: string; severity: string };
        }[];
        expect(grouped.map((c) => c.alert.unitId).sort()).toEqual(["vm-n1", "vm-n2"]);
        expect(grouped.every((c) => c.type === "alert.opened" && c.alert.severity === "critical")).toBe(true);
        // The default webhook only got the unit no route matched.
        expect(ops.hooks.map((h) => (h.body.alert as { unitId: string }).unitId)).toEqual(["vm-x"]);
        const mailsTo = (to: string) => smtp.mails.filter((m) => toOf(m.raw) === to);
        expect(mailsTo("north@example.test")).toHaveLength(2);
        expect(mailsTo("acme@example.test")).toHaveLength(1);
        expect(mailsTo("ops@example.test")).toHaveLength(1);
        expect(smtp.mails).toHaveLength(4);
        expect(smtp.mails.every((m) => m.secure)).toBe(true);
        await step(12, all);
        expect(north.hooks).toHaveLength(2); // the two resolutions, grouped again
        expect(ops.hooks).toHaveLength(2);
        expect(smtp.mails).toHaveLength(8);
        // Each change once per receiver: every delivery sent, none twice.
        const sent = await db.selectFrom("alert_deliveries").select(["channel", "state"]).execute();
        expect(sent.every((d) => d.state === "sent")).toBe(true);
        expect(sent.map((d) => d.channel).sort()).toEqual(
          [
            ...Array(4).fill("mail:north@example.test"),
            ...Array(4).fill("webhook:north"),
            ...Array(2).fill("mail:acme@example.test"),
            ...Array(2).fill("mail"),
            ...Array(2).fill("webhook:ops"),
          ].sort(),
        );

        // Phase 2: a silence on vm-x from now, a maintenance window on group north starting in 2 minutes.
        const now = st.clock.now();
        const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
        const s1 = await createSilence(db, { unit: "vm-x", for: "20m", reason: "cabling" }, "mia", now);
        const w1 = await createSilence(
          db,
          {
            kind: "maintenance",
            group: "north",
            starts: iso(now + 2 * MIN),
            ends: iso(now + 25 * MIN),
            reason: "store refit",
          },
          "mia",
          now,
        );
        expect(s1.ok && w1.ok).toBe(true);
        const refused = await createSilence(db, { for: "1h", reason: "x" }, "mia", now);
        expect(refused).toEqual({
          ok: false,
          problems: ["say what to silence: a unit, a group, a rule (or several of them)"],
        });
        const states = (await listSilences(db, now, "current")).map((s) => s.kind).sort();
        expect(states).toEqual(["maintenance", "silence"]);
        const before = { north: north.hooks.length, ops: ops.hooks.length, mails: smtp.mails.length };
        await step(3, all);
        await step(7, [acme]); // vm-x, vm-n1 and vm-n2 go offline inside their silences
        expect({ north: north.hooks.length, ops: ops.hooks.length, mails: smtp.mails.length }).toEqual(
          before,
        );
        const kept = await silencedChanges(db);
        expect(kept.map((c) => `${c.unitId} ${c.kind}`).sort()).toEqual([
          "vm-n1 opened",
          "vm-n2 opened",
          "vm-x opened",
        ]);
        expect(kept.find((c) => c.unitId === "vm-x")?.silenceReason).toBe("cabling");
        const noDeliveries = await db
          .selectFrom("alert_deliveries as d")
          .innerJoin("alert_changes as c", "c.id", "d.change_id")
          .select("d.channel")
          .where("c.silenced_by", "is not", null)
          .execute();
        expect(noDeliveries).toEqual([]);

        // The silence on vm-x ends (20 min): its alert, still open, is sent once, to its receivers.
        await step(11, [acme]);
        const xHooks = ops.hooks.slice(before.ops);
        expect(xHooks.map((h) => `${(h.body.alert as { unitId: string }).unitId} ${h.type}`)).toEqual([
          "vm-x alert.renotified",
        ]);
        expect(north.hooks.length).toBe(before.north); // the window still runs
        // Phase 3: acknowledged, no re-notification; un-acknowledged, re-notified again.
        const [xAlert] = await db
          .selectFrom("alerts")
          .select("id")
          .where("unit_id", "=", "vm-x")
          .where("state", "=", "open")
          .execute();
        expect(await acknowledge(db, xAlert?.id ?? "", "mia", st.clock.now())).toBe(true);
        const windowEnd = ops.hooks.length;
        await step(5, [acme]); // the window ends: the north alerts are sent, grouped
        expect(north.hooks.length).toBe(before.north + 1);
        expect((north.hooks.at(-1)?.body.changes as unknown[] | undefined)?.length).toBe(2);
        await step(30, [acme]);
        expect(ops.hooks.length).toBe(windowEnd);
        expect(await unacknowledge(db, xAlert?.id ?? "", "mia", st.clock.now())).toBe(true);
        expect(await unacknowledge(db, xAlert?.id ?? "", "mia", st.clock.now())).toBe(false);
        await step(1, [acme]);
        expect(ops.hooks.slice(windowEnd).map((h) => h.type)).toEqual(["alert.renotified"]);
        const history = await db
          .selectFrom("alert_changes")
          .select(["kind", "actor"])
          .where("alert_id", "=", xAlert?.id ?? "")
          .orderBy("at")
          .execute();
        expect(history.map((h) => h.kind)).toEqual([
          "opened",
          "renotified",
          "acknowledged",
          "unacknowledged",
          "renotified",
        ]);
        expect(history.filter((h) => h.actor !== null).map((h) => h.actor)).toEqual(["mia", "mia"]);
        expect([...north.hooks, ...ops.hooks].every((h) => h.valid && !h.duplicate)).toBe(true);
      } finally {
        await ev.close();
      }
    }, 120_000);
  });
}
