/**
 * The `alerts` section of the fleet config (src/fleet/config.ts) and its thresholds, with their defaults.
 * docs/alerts.md describes every key. Secrets (the SMTP password, the webhook signing secret) come from the
 * fleet's secrets file (`alertsSmtpPassword`, `alertsWebhookSecret`), never from this section.
 */
import { z } from "zod";
import { GROUP_NAME, GROUP_NAME_RULE } from "../groups/index.js";
import { ALERT_RULES, type AlertRule } from "./schema.js";
import { blockedPortOf, blockedPortWhy } from "./webhookPorts.js";

const minutes = z.number().positive().max(525_600);
const off = z.literal(false);

/** How urgent a rule's alerts are (issue 42): what routes match by `severities`. */
export const SEVERITIES = ["critical", "warning", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Each rule's severity unless `severities` in the section says otherwise. */
export const DEFAULT_SEVERITY: Record<AlertRule, Severity> = {
  offline: "critical",
  stuckMoney: "critical",
  entitlements: "critical",
  reconciliation: "warning",
  vendFailures: "warning",
  review: "warning",
  rollout: "warning",
  silent: "warning",
  backlog: "info",
};

const ruleName = z.enum(ALERT_RULES as [AlertRule, ...AlertRule[]]);
const address = z
  .string()
  .regex(/^[^\s@<>,;]+@[^\s@<>,;]+$/, "an e-mail address (name@host)")
  .max(320);
const webhookName = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, "letters, digits, _ and - (at most 40)");

/**
 * One route (issue 42): which changes (by rule, severity, the unit's groups and company: each list given
 * must match, an absent one matches any) go to which receivers (mail addresses, configured webhooks).
 */
const Route = z.strictObject({
  rules: z.array(ruleName).min(1).max(ALERT_RULES.length).optional(),
  severities: z.array(z.enum(SEVERITIES)).min(1).max(3).optional(),
  groups: z.array(z.string().regex(GROUP_NAME, GROUP_NAME_RULE)).min(1).max(100).optional(),
  /** A company's name, organisation number or id, as on the Companies page. */
  companies: z.array(z.string().min(1).max(200)).min(1).max(100).optional(),
  mail: z.array(address).min(1).max(50).optional(),
  webhooks: z.array(webhookName).min(1).max(10).optional(),
});
export type AlertRoute = z.infer<typeof Route>;

export const AlertsSection = z
  .strictObject({
    /** Seconds between evaluations (the fleet's job scheduler); default 60. */
    everySeconds: z.number().int().min(1).max(3600).default(60),
    /** How long the evaluator's lease lasts; a crashed evaluator's work is taken over after it. */
    leaseSeconds: z.number().int().min(2).max(3600).default(120),
    /** Rules wait this long after the fleet starts (one heartbeat period of data). */
    startupGraceSeconds: z.number().int().min(0).max(3600).default(60),
    /** A condition clear this long resolves its alert (no flapping). */
    holdOffMinutes: minutes.default(10),
    /** An open, unacknowledged alert is sent again this often; 0: never. */
    renotifyMinutes: z.number().min(0).max(525_600).default(240),
    /** More changes than this in one run go out as one digest mail. */
    digestAfter: z.number().int().min(1).max(1000).default(5),
    /** Longest one send (an SMTP exchange, a webhook request) may take before it counts as failed. */
    sendTimeoutSeconds: z.number().int().min(1).max(120).default(15),
    /** Delivery attempts before a delivery is marked failed (backoff doubling from 5 s up to 10 min). */
    maxAttempts: z.number().int().min(1).max(100).default(12),
    rules: z
      .strictObject({
        offline: z.union([off, z.strictObject({ minutes: minutes.default(10) })]).prefault({}),
        silent: z
          .union([
            off,
            z.strictObject({
              windowMinutes: minutes.default(120),
              weeks: z.number().int().min(1).max(12).default(4),
              minExpected: z.number().positive().max(10_000).default(3),
            }),
          ])
          .prefault({}),
        vendFailures: z
          .union([
            off,
            z.strictObject({
              lastVends: z.number().int().min(1).max(10_000).default(20),
              share: z.number().gt(0).max(1).default(0.3),
              lookbackHours: z.number().positive().max(720).default(24),
            }),
          ])
          .prefault({}),
        stuckMoney: z
          .union([off, z.strictObject({ minutes: z.number().min(0).max(525_600).default(0) })])
          .prefault({}),
        review: z
          .union([off, z.strictObject({ hours: z.number().positive().max(720).default(24) })])
          .prefault({}),
        backlog: z
          .union([
            off,
            z.strictObject({ events: z.number().int().min(1).default(500), ageMinutes: minutes.default(60) }),
          ])
          .prefault({}),
        reconciliation: z.union([off, z.strictObject({})]).prefault({}),
        entitlements: z
          .union([off, z.strictObject({ hours: z.number().positive().max(8760).default(48) })])
          .prefault({}),
        rollout: z
          .union([off, z.strictObject({ hours: z.number().positive().max(8760).default(24) })])
          .prefault({}),
      })
      .prefault({}),
    mail: z
      .strictObject({
        host: z.string().min(1).max(253),
        port: z.number().int().min(1).max(65535).default(587),
        /** `starttls` (default; the connection must upgrade) or `tls` (implicit TLS, port 465). */
        security: z.enum(["starttls", "tls"]).default("starttls"),
        username: z.string().min(1).max(320).optional(),
        /** PEM file of the CA that signed the SMTP server's certificate (else the system's). */
        caFile: z.string().min(1).max(4096).optional(),
        from: z.string().min(3).max(320),
        to: z.array(z.string().min(3).max(320)).min(1).max(50),
        subjectPrefix: z.string().max(100).default("[vendd fleet]"),
      })
      .optional(),
    webhooks: z
      .array(
        z.strictObject({
          name: webhookName,
          url: z
            .string()
            .url()
            .refine((u) => /^https?:\/\//.test(u), "must be an http(s):// URL")
            .superRefine((u, c) => {
              const port = blockedPortOf(u);
              if (port !== null) c.addIssue({ code: "custom", message: blockedPortWhy(port) });
            }),
          /** One POST per evaluation with all of its changes for this webhook (issue 42), else one per change. */
          group: z.boolean().optional(),
        }),
      )
      .max(10)
      .default([]),
    /** A rule's severity, where it differs from DEFAULT_SEVERITY. */
    severities: z.partialRecord(ruleName, z.enum(SEVERITIES)).default({}),
    /** Receivers per rule, severity, group and company (issue 42); none: every change to mail.to and every webhook. */
    routes: z.array(Route).max(100).default([]),
  })
  .superRefine((s, c) => {
    const names = new Set(s.webhooks.map((w) => w.name));
    s.routes.forEach((r, i) => {
      if (r.mail === undefined && r.webhooks === undefined)
        c.addIssue({
          code: "custom",
          path: ["routes", i],
          message: "a route needs receivers: mail, webhooks or both",
        });
      if (r.mail !== undefined && s.mail === undefined)
        c.addIssue({
          code: "custom",
          path: ["routes", i, "mail"],
          message: "mail receivers need the mail section (the SMTP server to send through)",
        });
      for (const [j, w] of (r.webhooks ?? []).entries())
        if (!names.has(w))
          c.addIssue({
            code: "custom",
            path: ["routes", i, "webhooks", j],
            message: `no webhook named ${JSON.stringify(w)} in alerts.webhooks (configured: ${[...names].join(", ") || "none"})`,
          });
    });
  });
export type AlertsSectionInput = z.input<typeof AlertsSection>;
type Section = z.infer<typeof AlertsSection>;
export type AlertRules = Section["rules"];

export interface AlertSettings extends Omit<Section, "mail"> {
  mail?: NonNullable<Section["mail"]> & { password?: string };
  /** The HMAC-SHA256 key of webhook signatures (needed when webhooks are configured). */
  webhookSecret?: string;
  /** Dashboard origin for links in mails (the fleet's publicUrl), if known. */
  publicUrl?: string;
}

/** The settings with every default (tests; a section `{}`). */
export function alertSettings(
  input: AlertsSectionInput = {},
  extra: Partial<AlertSettings> = {},
): AlertSettings {
  const s = AlertsSection.parse(input);
  const { mail, ...rest } = s;
  return { ...rest, ...(mail === undefined ? {} : { mail }), ...extra };
}
