/**
 * Sending the changes the outbox holds: e-mail over SMTP (nodemailer, STARTTLS required unless implicit
 * TLS; one mail per change, one digest when a run made more than `digestAfter`) and webhooks (a JSON POST
 * signed with HMAC-SHA256 over `timestamp + "." + body`). A delivery is marked sent only after the server
 * accepted it; a failure is retried with doubling backoff and kept visible (`last_error`), never logged
 * with a secret in it.
 */
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import nodemailer from "nodemailer";
import type { FleetContext } from "../context.js";
import { severityOf } from "./routing.js";
import type { AlertsDb } from "./schema.js";
import type { AlertSettings, Severity } from "./settings.js";
import { type DueDelivery, markAttemptFailed, markSent } from "./store.js";
import { digestMail, singleMail } from "./views.js";
import { blockedPortOf, blockedPortWhy } from "./webhookPorts.js";

/** Webhook signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = "x-vendd-signature";
export const CHANGE_ID_HEADER = "x-vendd-change-id";

export function retryDelayMs(attempts: number): number {
  return Math.min(5_000 * 2 ** attempts, 600_000);
}

export function signWebhook(secret: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/** One change as a webhook carries it (docs/alerts.md). */
function changeJson(d: DueDelivery, severity: Severity): Record<string, unknown> {
  const a = d.alert;
  return {
    id: d.changeId,
    type: `alert.${d.kind}`,
    at: new Date(d.at).toISOString(),
    alert: {
      id: a.id,
      unitId: a.unitId,
      unitLabel: a.unitLabel,
      rule: a.rule,
      state: a.state,
      detail: d.detail,
      openedAt: new Date(a.openedAt).toISOString(),
      resolvedAt: a.resolvedAt === null ? null : new Date(a.resolvedAt).toISOString(),
      acknowledgedBy: a.acknowledgedBy,
      severity,
    },
  };
}

/** The documented webhook body (docs/alerts.md): one change. */
export function webhookBody(
  d: DueDelivery,
  s: Pick<AlertSettings, "severities"> = { severities: {} },
): string {
  return JSON.stringify(changeJson(d, severityOf(s, d.alert.rule)));
}

/**
 * A grouped webhook's body (issue 42): the changes of one evaluation in one post. Its `id` is derived from
 * the change ids it carries; a receiver drops repeats by each change's own id.
 */
export function groupedWebhookBody(ds: readonly DueDelivery[], s: Pick<AlertSettings, "severities">): string {
  const ids = ds.map((d) => d.changeId);
  return JSON.stringify({
    id: `group-${createHash("sha256").update(ids.join(",")).digest("hex").slice(0, 32)}`,
    type: "alert.changes",
    at: new Date(Math.max(...ds.map((d) => d.at))).toISOString(),
    changes: ds.map((d) => changeJson(d, severityOf(s, d.alert.rule))),
  });
}

/** Error text without any configured secret in it. */
function scrub(e: unknown, secrets: readonly string[]): string {
  let m = e instanceof Error ? e.message : String(e);
  for (const s of secrets) if (s.length > 0) m = m.split(s).join("***");
  return m.replace(/\s+/g, " ").slice(0, 300);
}

/** `host:port` of a URL: what an error may name (a webhook's path or query may hold a token). */
function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port === "" ? (u.protocol === "https:" ? "443" : "80") : u.port}`;
  } catch {
    return "an unparsable URL";
  }
}

function fieldOf(e: unknown, key: "code" | "message" | "name" | "cause" | "errors"): unknown {
  return typeof e === "object" && e !== null && key in e ? (e as Record<string, unknown>)[key] : undefined;
}

/**
 * What a failed fetch means, from the error's `cause` (fetch itself only says "fetch failed"): refused,
 * unknown host, reset, a blocked port, TLS, no answer in time; else the cause's own message and code.
 */
export function fetchFailure(e: unknown, url: string, timeoutSeconds: number): string {
  const at = hostOf(url);
  const name = fieldOf(e, "name");
  if (name === "TimeoutError" || name === "AbortError")
    return `no answer from ${at} within ${timeoutSeconds} s`;
  let cause = fieldOf(e, "cause") ?? e;
  // undici may wrap the socket's error once more (an AggregateError for several addresses).
  const errors = fieldOf(cause, "errors");
  if (Array.isArray(errors) && errors.length > 0) cause = errors[0];
  const code = fieldOf(cause, "code");
  const message = String(fieldOf(cause, "message") ?? cause);
  const blocked = blockedPortOf(url);
  if (message === "bad port" && blocked !== null) return `not sent to ${at}: ${blockedPortWhy(blocked)}`;
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused by ${at} (nothing listens there?)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
      return `unknown host ${at.slice(0, at.lastIndexOf(":"))} (DNS: ${String(code)})`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `the connection to ${at} was closed before an answer`;
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
    case "UND_ERR_HEADERS_TIMEOUT":
      return `no answer from ${at} within ${timeoutSeconds} s`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${at} is unreachable (${code})`;
    default:
      if (typeof code === "string" && /CERT|SSL|TLS/.test(code))
        return `TLS with ${at} failed: ${message} (${code})`;
      return `${message}${typeof code === "string" ? ` (${code})` : ""} at ${at}`;
  }
}

export interface Sender {
  mail?: (msg: {
    subject: string;
    text: string;
    html: string;
    messageId: string;
    changeIds: string[];
    /** Routed receivers (issue 42) instead of `mail.to`. */
    to?: string[];
  }) => Promise<void>;
  /** `changeId`: the change's id, or the comma-separated ids of a grouped post. */
  webhook: (name: string, changeId: string, body: string) => Promise<void>;
  secrets: string[];
  close(): void;
}

export function makeSender(s: AlertSettings): Sender {
  const secrets = [s.mail?.password ?? "", s.webhookSecret ?? ""];
  let mail: Sender["mail"];
  let close = (): void => undefined;
  if (s.mail !== undefined) {
    const m = s.mail;
    const transport = nodemailer.createTransport({
      host: m.host,
      port: m.port,
      secure: m.security === "tls",
      requireTLS: m.security === "starttls",
      ...(m.username === undefined ? {} : { auth: { user: m.username, pass: m.password ?? "" } }),
      tls: { minVersion: "TLSv1.2", ...(m.caFile === undefined ? {} : { ca: readFileSync(m.caFile) }) },
      connectionTimeout: s.sendTimeoutSeconds * 1000,
      greetingTimeout: s.sendTimeoutSeconds * 1000,
      socketTimeout: s.sendTimeoutSeconds * 1000,
    });
    close = () => transport.close();
    mail = async (msg) => {
      await transport.sendMail({
        from: m.from,
        to: msg.to ?? m.to,
        subject: `${m.subjectPrefix} ${msg.subject}`.trim(),
        text: msg.text,
        html: msg.html,
        messageId: msg.messageId,
        headers: { "X-Vendd-Change-Ids": msg.changeIds.join(",") },
      });
    };
  }
  const urls = new Map(s.webhooks.map((w) => [w.name, w.url]));
  const webhook = async (name: string, changeId: string, body: string): Promise<void> => {
    const url = urls.get(name);
    if (url === undefined) throw new Error(`webhook ${name} is no longer configured`);
    if (s.webhookSecret === undefined) throw new Error("no webhook secret (alertsWebhookSecret)");
    const ts = Math.floor(Date.now() / 1000);
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [SIGNATURE_HEADER]: signWebhook(s.webhookSecret, ts, body),
        [CHANGE_ID_HEADER]: changeId,
        "user-agent": "vendd-fleet-alerts",
      },
      body,
      redirect: "error",
      signal: AbortSignal.timeout(s.sendTimeoutSeconds * 1000),
    }).catch((e: unknown) => {
      throw new Error(`webhook ${name}: ${fetchFailure(e, url, s.sendTimeoutSeconds)}`);
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status < 200 || res.status > 299)
      throw new Error(
        `webhook ${name} (${hostOf(url)}) answered HTTP ${res.status}${res.statusText === "" ? "" : ` ${res.statusText}`}`,
      );
  };
  return { ...(mail === undefined ? {} : { mail }), webhook, secrets, close };
}

/** How long a sender holds a delivery it is sending: longer than any one send's timeouts add up to. */
export function claimMs(s: AlertSettings): number {
  return 4 * s.sendTimeoutSeconds * 1000;
}

/**
 * Sends the due deliveries: each (or each digest) is claimed right before its send through `claim` (which
 * returns the ones this sender got), then marked sent or failed (with its backoff) as it settles.
 */
export async function sendDue(
  ctx: FleetContext,
  db: AlertsDb,
  s: AlertSettings,
  sender: Sender,
  due: readonly DueDelivery[],
  claim: (ds: readonly DueDelivery[]) => Promise<DueDelivery[]>,
): Promise<{ sent: number; failed: number }> {
  let sent = 0;
  let failed = 0;
  const settle = async (
    all: readonly DueDelivery[],
    attempt: (ds: readonly DueDelivery[]) => Promise<void>,
  ) => {
    const ds = await claim(all);
    if (ds.length === 0) return;
    try {
      await attempt(ds);
      for (const d of ds) await markSent(db, d.changeId, d.channel, ctx.clock.now());
      sent += ds.length;
    } catch (e) {
      const error = scrub(e, sender.secrets);
      for (const d of ds)
        await markAttemptFailed(db, d, error, ctx.clock.now(), retryDelayMs(d.attempts), s.maxAttempts);
      failed += ds.length;
      ctx.logger.warn(
        { channel: ds[0]?.channel, changes: ds.map((d) => d.changeId), error },
        "alert delivery failed; retried later",
      );
    }
  };
  const grouped = new Set(s.webhooks.filter((w) => w.group === true).map((w) => `webhook:${w.name}`));
  const byChannelRun = (ds: readonly DueDelivery[]): DueDelivery[][] => {
    const m = new Map<string, DueDelivery[]>();
    for (const d of ds) {
      const k = `${d.channel}\u0000${d.runId ?? d.changeId}`;
      m.set(k, [...(m.get(k) ?? []), d]);
    }
    return [...m.values()];
  };
  const hooks = due.filter((x) => x.channel.startsWith("webhook:"));
  for (const d of hooks.filter((x) => !grouped.has(x.channel)))
    await settle([d], () =>
      sender.webhook(d.channel.slice("webhook:".length), d.changeId, webhookBody(d, s)),
    );
  for (const group of byChannelRun(hooks.filter((x) => grouped.has(x.channel))))
    await settle(group, (mine) =>
      sender.webhook(
        (mine[0]?.channel ?? "").slice("webhook:".length),
        mine.map((d) => d.changeId).join(","),
        groupedWebhookBody(mine, s),
      ),
    );
  const mails = due.filter((x) => x.channel === "mail" || x.channel.startsWith("mail:"));
  const mailer = sender.mail;
  if (mails.length > 0 && mailer === undefined) {
    for (const d of mails) await settle([d], () => Promise.reject(new Error("mail is no longer configured")));
    return { sent, failed };
  }
  for (const group of byChannelRun(mails)) {
    if (mailer === undefined) break;
    const channel = group[0]?.channel ?? "mail";
    // A routed address (`mail:<address>`) gets its own mail; its Message-ID names it, so ids stay unique.
    const to = channel === "mail" ? undefined : [channel.slice("mail:".length)];
    const suffix =
      to === undefined ? "" : `.${createHash("sha256").update(channel).digest("hex").slice(0, 12)}`;
    const rcpt = to === undefined ? {} : { to };
    if (group.length > s.digestAfter) {
      await settle(group, (mine) => {
        const ids = mine.map((d) => d.changeId);
        const digestId = createHash("sha256").update(ids.join(",")).digest("hex").slice(0, 32);
        const m = digestMail(mine, s.publicUrl);
        return mailer({
          ...m,
          ...rcpt,
          messageId: `<digest-${digestId}${suffix}@vendd-fleet-alerts>`,
          changeIds: ids,
        });
      });
    } else
      for (const d of group) {
        const m = singleMail(d, s.publicUrl);
        await settle([d], () =>
          mailer({
            ...m,
            ...rcpt,
            messageId: `<${d.changeId}${suffix}@vendd-fleet-alerts>`,
            changeIds: [d.changeId],
          }),
        );
      }
  }
  return { sent, failed };
}
