/**
 * The alert tests' bench (issue 37): a fleet (SQLite in memory or a PostgreSQL database, the unit API's
 * own set-up), real units reporting through the signed unit API, an injected clock, the evaluator as the
 * schedule runs it, and the real receivers (SMTP with STARTTLS, a signature-checking webhook receiver).
 * Call `alertBench` inside a `describe`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { SessionData, UnitEvent } from "../../src/core/fleetWire.js";
import { selfSignedCertificate } from "../../src/emulator/testing/httpsReceiver.js";
import { type AlertSettings, alertEvaluator, alertSettings } from "../../src/fleet/alerts/index.js";
import type { AlertsSectionInput } from "../../src/fleet/alerts/settings.js";
import {
  type ReceivedHook,
  type ReceivedMail,
  type SmtpReceiver,
  startSmtp,
  startWebhook,
  type WebhookReceiver,
} from "./alertReceivers.js";
import type { SimUnit } from "./fleet.js";
import { heartbeat, type UnitApiState, unitApiOn } from "./fleetUnitApi.js";

export const SMTP_USER = "alerts";
export const SMTP_PASSWORD = "smtp-pass-never-logged-7f3a";
export const WEBHOOK_SECRET = "whsec-0123456789abcdef-never-logged";
const MIN = 60_000;

export function testSettings(
  port: number,
  caFile: string,
  url: string,
  over: AlertsSectionInput = {},
): AlertSettings {
  const s = alertSettings({
    holdOffMinutes: 10,
    renotifyMinutes: 30,
    startupGraceSeconds: 60,
    digestAfter: 3,
    rules: {
      offline: { minutes: 5 },
      silent: { windowMinutes: 60, weeks: 2, minExpected: 2 },
      vendFailures: { lastVends: 10, share: 0.3 },
      review: { hours: 0.75 },
      backlog: { events: 500, ageMinutes: 30 },
      entitlements: { hours: 24 },
      rollout: { hours: 24 },
    },
    mail: {
      host: "127.0.0.1",
      port,
      username: SMTP_USER,
      caFile,
      from: "fleet@example.test",
      to: ["ops@example.test"],
    },
    webhooks: [{ name: "ops", url }],
    ...over,
  });
  if (s.mail !== undefined) s.mail.password = SMTP_PASSWORD;
  s.webhookSecret = WEBHOOK_SECRET;
  return s;
}

export function alertBench(dialect: "sqlite" | "postgres", over: AlertsSectionInput = {}) {
  let st: UnitApiState | null = null;
  const api = unitApiOn(dialect, { dbPrefix: "alerts" }, (s) => {
    st = s;
  });
  const state = (): UnitApiState => {
    if (st === null) throw new Error("no fleet (outside a test?)");
    return st;
  };
  let dir = "";
  let smtp: SmtpReceiver | null = null;
  let hook: WebhookReceiver | null = null;
  let ev: ReturnType<typeof alertEvaluator> | null = null;
  let settings: AlertSettings | null = null;
  const seqs = new Map<string, number>();
  const hbOver = new Map<string, Record<string, unknown>>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-alerts-"));
    const cert = selfSignedCertificate();
    writeFileSync(join(dir, "ca.pem"), cert.cert);
    smtp = await startSmtp(cert, SMTP_USER, SMTP_PASSWORD);
    hook = await startWebhook(WEBHOOK_SECRET);
  });
  afterAll(async () => {
    await smtp?.close();
    await hook?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    settings = testSettings(smtp?.port ?? 0, join(dir, "ca.pem"), hook?.url ?? "", over);
    ev = alertEvaluator(state().ctx, settings, { startedAt: state().clock.now() });
    seqs.clear();
    hbOver.clear();
  });
  afterEach(async () => {
    await ev?.close();
    smtp?.mails.splice(0);
    hook?.reset();
  });

  const b = {
    state,
    get evaluator() {
      if (ev === null) throw new Error("no evaluator");
      return ev;
    },
    get settings(): AlertSettings {
      if (settings === null) throw new Error("no settings");
      return settings;
    },
    mails: (): ReceivedMail[] => smtp?.mails ?? [],
    hooks: (): ReceivedHook[] => hook?.hooks ?? [],
    receiver: (): WebhookReceiver => {
      if (hook === null) throw new Error("no receiver");
      return hook;
    },
    now: () => state().clock.now(),
    async unit(id: string, label = "site"): Promise<SimUnit> {
      const u = await api.approved(id, label);
      seqs.set(id, 0);
      return u;
    },
    /** Heartbeat fields this unit sends from now on (state, unresolved, backlog). */
    setHeartbeat(u: SimUnit, fields: Record<string, unknown>): void {
      hbOver.set(u.id, { ...(hbOver.get(u.id) ?? {}), ...fields });
    },
    async beat(u: SimUnit): Promise<void> {
      const body = {
        ...heartbeat(u.id),
        at: state().clock.now(),
        backlog: { events: 0, oldestAt: null, lastSeq: seqs.get(u.id) ?? 0 },
        unresolved: 0,
        ...hbOver.get(u.id),
      };
      const r = await api.post(u, "/heartbeat", body);
      if (r.status !== 200) throw new Error(`heartbeat ${r.status} ${JSON.stringify(r.json)}`);
    },
    /** Sessions (and other events) through the unit API, numbered from the unit's next seq. */
    async report(u: SimUnit, events: Omit<UnitEvent, "seq">[]): Promise<void> {
      const from = (seqs.get(u.id) ?? 0) + 1;
      const batch = events.map((e, i) => ({ ...e, seq: from + i })) as UnitEvent[];
      const r = await api.post(u, "/events", { unitId: u.id, events: batch });
      if (r.status !== 200) throw new Error(`events ${r.status} ${JSON.stringify(r.json)}`);
      seqs.set(u.id, from + batch.length - 1);
    },
    /** Advances the clock minute by minute: `beating` units send a heartbeat, then the evaluator runs. */
    async step(minutes: number, beating: readonly SimUnit[]): Promise<void> {
      for (let i = 0; i < minutes; i++) {
        state().clock.advance(MIN);
        for (const u of beating) await b.beat(u);
        await b.evaluator.run();
      }
    },
  };
  return b;
}

/** A paid session closed at `closedAt` with these vend outcomes. */
export function sale(
  closedAt: number,
  id: string,
  outcomes: ("success" | "failure")[] = ["success"],
  over: Partial<SessionData> = {},
): Omit<UnitEvent, "seq"> {
  return {
    at: closedAt,
    kind: "session",
    data: {
      sessionId: id,
      orderId: `o-${id}`,
      paymentId: `p-${id}`,
      driver: "v10",
      flow: "selection",
      item: 12,
      price: 250,
      result: "captured",
      reason: "",
      approved: 250,
      captured: 250,
      refunded: 0,
      currency: "NOK",
      openedAt: closedAt - 30_000,
      closedAt,
      vends: outcomes.map((outcome) => ({ item: 12, price: 250, outcome })),
      review: false,
      member: null,
      ...over,
    },
  } as Omit<UnitEvent, "seq">;
}
