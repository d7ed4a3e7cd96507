/**
 * The fleet server's configuration file (`vendd fleet serve --config FILE`, YAML): where the database is,
 * where to listen, TLS or a TLS proxy, bundle keys, and the optional sections that switch on reconciliation
 * (`reporting`), member plans (`plans`), company invoices (`invoices`) and their schedules (`schedules`).
 *
 * Secrets (client secrets, API keys, access tokens, the sign-up form's CSRF secret, the badge salt) are never
 * in this file: they come from the file named by `secretsFile` or from environment variables, and a key that
 * looks like a secret in the main file is refused. Errors name the file and the field, never a value.
 */
import { dirname, resolve } from "node:path";
import { Cron } from "croner";
import { z } from "zod";
import { type AlertSettings, AlertsSection } from "./alerts/settings.js";
import { check, checkAll, FleetConfigError, readYaml, secretKeys } from "./configFile.js";

export { FleetConfigError } from "./configFile.js";

const httpsUrl = z
  .string()
  .url()
  .refine((u) => u.startsWith("https://"), "must be an https:// URL")
  .transform((u) => u.replace(/\/+$/, ""));
const anyUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), "must be an http(s):// URL")
  .transform((u) => u.replace(/\/+$/, ""));
const file = z.string().min(1).max(4096);
const timeZone = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, "not an IANA time zone (e.g. Europe/Oslo, UTC)");
/** A 5-field cron pattern (minute hour day month weekday), checked here by croner itself. */
const cronPattern = z
  .string()
  .regex(/^\S+( \S+){4}$/, "a cron pattern of 5 fields, e.g. '30 4 * * *'")
  .refine(
    validCron,
    "not a valid cron pattern (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-7), e.g. '30 4 * * *'",
  );

function validCron(pattern: string): boolean {
  try {
    new Cron(pattern, { paused: true }).stop();
    return true;
  } catch {
    return false;
  }
}
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "HH:MM, e.g. 06:00");

const Main = z.strictObject({
  db: z.string().min(1).optional(),
  listen: z.string().min(1).optional(),
  timeZone: timeZone.optional(),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).optional(),
  /** The fleet's public https origin (callbacks, sign-up links). */
  publicUrl: httpsUrl.optional(),
  /** Serve HTTPS directly with this certificate chain and key (PEM files). */
  tls: z.strictObject({ cert: file, key: file }).optional(),
  /** Behind a TLS-terminating proxy: trust X-Forwarded-* and mark cookies Secure. */
  trustProxy: z.boolean().optional(),
  /** Most unit enrolments waiting for approval; past it new ones are refused (429). */
  maxPendingEnrolments: z.number().int().min(1).max(100_000).optional(),
  bundleKeys: z.array(file).max(16).optional(),
  /** YAML file of secrets (mode 0600), relative to this file. */
  secretsFile: file.optional(),
  reporting: z
    .strictObject({
      /** The reporting settings file of `vendd fleet reconcile --reporting` (it names its own secrets). */
      settingsFile: file,
    })
    .optional(),
  plans: z
    .strictObject({
      userRedirectUrl: httpsUrl,
      countryCode: z.enum(["DK", "FI"]),
      autoReserve: z.boolean().default(false),
      /** Encrypted minisign secret key that signs the entitlement lists, and the file with its passphrase. */
      entitlementKeyFile: file.optional(),
      entitlementPassphraseFile: file.optional(),
      subscriptions: z.strictObject({
        baseUrl: anyUrl,
        tokenUrl: anyUrl,
        clientId: z.string().min(1).max(200),
        providerId: z.string().min(1).max(200),
      }),
    })
    .refine(
      (p) => (p.entitlementKeyFile === undefined) === (p.entitlementPassphraseFile === undefined),
      "entitlementKeyFile and entitlementPassphraseFile go together",
    )
    .optional(),
  invoices: z
    .strictObject({
      baseUrl: anyUrl,
      /** How the service authenticates its callbacks: `apikey`, or `basic` with this user name. */
      callbackAuth: z.enum(["apikey", "basic"]).default("apikey"),
      callbackUsername: z.string().min(1).max(200).optional(),
    })
    .refine(
      (i) => i.callbackAuth !== "basic" || i.callbackUsername !== undefined,
      "callbackAuth basic needs callbackUsername",
    )
    .optional(),
  /** Alerts (issue 37): rules, thresholds, mail and webhooks; docs/alerts.md. Absent: no evaluation. */
  alerts: AlertsSection.optional(),
  /**
   * Issue 41: the encrypted minisign key that signs each unit's values (and the file with its passphrase).
   * Absent: values are held and edited, but not sent to units.
   */
  values: z.strictObject({ keyFile: file, passphraseFile: file }).optional(),
  schedules: z
    .strictObject({
      /** Nightly reconciliation (cron, fleet time zone; default '30 4 * * *'), `false` to switch off. */
      reconcile: z.union([cronPattern, z.literal(false)]).default("30 4 * * *"),
      /** Days reconciled each night, ending yesterday. */
      reconcileDays: z.number().int().min(1).max(31).default(1),
      /** Plan cycle (charges, suspensions, entitlement lists) every N minutes of the hour (1–30); 0: off. */
      planCycleMinutes: z.number().int().min(0).max(30).default(10),
      /** Day of the month (1–28) on which last month's company invoices are made; 0 switches off. */
      invoiceDay: z.number().int().min(0).max(28).default(2),
      invoiceTime: hhmm.default("06:00"),
    })
    .optional(),
});

const Secrets = z.strictObject({
  plansCallbackApiKey: z
    .string()
    .regex(/^[A-Za-z0-9\-._~+/]{16,200}=*$/, "a token68 value of at least 16 characters")
    .optional(),
  plansCsrfSecret: z.string().min(32, "at least 32 characters").optional(),
  badgeSalt: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,}$/, "base64url, at least 16 characters")
    .optional(),
  subscriptionsClientSecret: z.string().min(1).optional(),
  invoicesAccessToken: z.string().min(1).optional(),
  invoicesCallbackSecret: z.string().min(16, "at least 16 characters").optional(),
  alertsSmtpPassword: z.string().min(1).optional(),
  alertsWebhookSecret: z.string().min(16, "at least 16 characters").optional(),
  /** The bearer token of `GET /metrics` (issue 45): Prometheus's `authorization: { credentials: ... }`. */
  metricsToken: z
    .string()
    .regex(/^[A-Za-z0-9\-._~+/]{24,200}=*$/, "a token68 value of at least 24 characters")
    .optional(),
});
type Secrets = z.infer<typeof Secrets>;

/** Environment variables that may stand in for each secret (the secrets file wins). */
export const SECRET_ENV: Record<keyof Secrets, string> = {
  plansCallbackApiKey: "VENDD_PLANS_CALLBACK_API_KEY",
  plansCsrfSecret: "VENDD_PLANS_CSRF_SECRET",
  badgeSalt: "VENDD_PLANS_BADGE_SALT",
  subscriptionsClientSecret: "VENDD_SUBSCRIPTIONS_CLIENT_SECRET",
  invoicesAccessToken: "VENDD_INVOICES_ACCESS_TOKEN",
  invoicesCallbackSecret: "VENDD_INVOICES_CALLBACK_SECRET",
  alertsSmtpPassword: "VENDD_ALERTS_SMTP_PASSWORD",
  alertsWebhookSecret: "VENDD_ALERTS_WEBHOOK_SECRET",
  metricsToken: "VENDD_METRICS_TOKEN",
};

export interface FleetConfig {
  /** The file it was read from (absolute), or null for the built-in defaults. */
  path: string | null;
  db?: string;
  listen?: string;
  timeZone?: string;
  logLevel?: string;
  publicUrl?: string;
  tls?: { cert: string; key: string };
  trustProxy: boolean;
  /** Set in the file; else the server's default (units/routes.ts DEFAULT_MAX_PENDING_ENROLMENTS). */
  maxPendingEnrolments?: number;
  bundleKeys: string[];
  reporting?: { settingsFile: string };
  plans?: {
    publicUrl: string;
    userRedirectUrl: string;
    countryCode: "DK" | "FI";
    autoReserve: boolean;
    entitlementKeyFile?: string;
    entitlementPassphraseFile?: string;
    callbackApiKey: string;
    csrfSecret: Buffer;
    badgeSalt: string;
    subscriptions: {
      baseUrl: string;
      tokenUrl: string;
      clientId: string;
      providerId: string;
      clientSecret: string;
    };
  };
  invoices?: {
    baseUrl: string;
    accessToken: string;
    callbackAuth: { kind: "apikey"; key: string } | { kind: "basic"; username: string; password: string };
  };
  /** Alerts (issue 37), with their secrets; absent when the section is. */
  alerts?: AlertSettings;
  /** The bearer token of `GET /metrics` (secrets file or $VENDD_METRICS_TOKEN); absent: managers only. */
  metricsToken?: string;
  /** The values key's files (issue 41), resolved; absent when the section is. */
  values?: { keyFile: string; passphraseFile: string };
  schedules: {
    reconcile: string | false;
    reconcileDays: number;
    planCycleMinutes: number;
    invoiceDay: number;
    invoiceTime: string;
  };
  /** Every secret value read, for the logger's redaction list. */
  secrets: string[];
}

/**
 * Only the database of the fleet config at `path` (resolved like `loadFleetConfig`), for the admin commands
 * that need nothing else: they do not need the sections' secrets. Throws FleetConfigError.
 */
export function fleetConfigDb(path: string): string | undefined {
  const abs = resolve(path);
  const doc = readYaml(abs, `fleet config ${abs}`).value;
  const m = check(Main, doc, `fleet config ${abs}`);
  if (m.db === undefined) return undefined;
  return /^postgres(ql)?:\/\//.test(m.db) || m.db === ":memory:" ? m.db : resolve(dirname(abs), m.db);
}

/**
 * What the admin commands take from a fleet config at `path` (resolved like `loadFleetConfig`): the
 * database, the reporting settings file and the time zone. Throws FleetConfigError.
 */
export function fleetConfigAdmin(path: string): { db?: string; reporting?: string; timeZone?: string } {
  const abs = resolve(path);
  const m = check(Main, readYaml(abs, `fleet config ${abs}`).value, `fleet config ${abs}`);
  const db = fleetConfigDb(abs);
  return {
    ...(db === undefined ? {} : { db }),
    ...(m.reporting === undefined ? {} : { reporting: resolve(dirname(abs), m.reporting.settingsFile) }),
    ...(m.timeZone === undefined ? {} : { timeZone: m.timeZone }),
  };
}

/** Whether a fleet config switches alerting on (has an `alerts` section), for `vendd fleet alerts`. */
export function fleetConfigAlertsOn(path: string): boolean {
  const abs = resolve(path);
  return check(Main, readYaml(abs, `fleet config ${abs}`).value, `fleet config ${abs}`).alerts !== undefined;
}

/** The bundle key files a fleet config names (`bundleKeys`, relative to the file), for `fleet bundle upload`. */
export function fleetConfigBundleKeys(path: string): string[] {
  const abs = resolve(path);
  const m = check(Main, readYaml(abs, `fleet config ${abs}`).value, `fleet config ${abs}`);
  return (m.bundleKeys ?? []).map((f) => resolve(dirname(abs), f));
}

/** The configuration with nothing in it: unit API and dashboard on the defaults. */
export function defaultFleetConfig(): FleetConfig {
  return {
    path: null,
    trustProxy: false,
    bundleKeys: [],
    schedules: check(Main.shape.schedules.unwrap(), {}, "schedules"),
    secrets: [],
  };
}

/**
 * Reads and checks the fleet configuration at `path` and its secrets (the `secretsFile`, else `env`);
 * relative file names are resolved against the file's directory. Throws FleetConfigError naming every
 * problem found (one per line when there are several).
 */
export function loadFleetConfig(path: string, env: NodeJS.ProcessEnv = process.env): FleetConfig {
  const { cfg, problems } = readFleetConfig(path, env);
  if (problems.length > 0) throw new FleetConfigError(problemsMessage(cfg.path ?? resolve(path), problems));
  return cfg;
}

/** `fleet config FILE: the problem`, or the problems one a line, counted. */
export function problemsMessage(abs: string, problems: readonly string[]): string {
  if (problems.length === 1) return `fleet config ${abs}: ${problems[0] ?? ""}`;
  return `fleet config ${abs}: ${problems.length} problems, nothing started:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}

/**
 * The configuration at `path` and every problem in it, collected rather than stopping at the first (a bad
 * key is left out and the rest still checked), so that one start names them all. A file that cannot be
 * read or parsed at all throws FleetConfigError.
 */
export function readFleetConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
): { cfg: FleetConfig; problems: string[] } {
  const abs = resolve(path);
  const base = dirname(abs);
  const doc = readYaml(abs, `fleet config ${abs}`).value;
  const problems: string[] = [];
  const leaked = secretKeys(doc);
  if (leaked.length > 0)
    problems.push(
      `${leaked.join(", ")}: secrets do not belong in the main file; put them in secretsFile or the environment`,
    );
  const checked = checkAll(Main, withoutPaths(doc, leaked));
  problems.push(...checked.problems);
  const m = checked.data ?? {};
  const at = (f: string): string => resolve(base, f);

  let fileSecrets: Secrets = {};
  if (m.secretsFile !== undefined) {
    const sp = at(m.secretsFile);
    try {
      const read = readYaml(sp, `fleet secrets ${sp}`);
      fileSecrets = check(Secrets, read.value, `fleet secrets ${sp}`, {
        keyLine: read.keyLine,
        allowed: `a fleet secrets file holds only ${Object.keys(SECRET_ENV).join(", ")}`,
      });
    } catch (e) {
      if (!(e instanceof FleetConfigError)) throw e;
      problems.push(`secretsFile: ${e.message}`);
    }
  }
  const envSecrets: Record<string, string> = {};
  for (const [key, name] of Object.entries(SECRET_ENV)) {
    const v = env[name];
    if (v !== undefined && v !== "") envSecrets[key] = v;
  }
  const fromEnv = checkAll(Secrets, envSecrets);
  for (const p of fromEnv.problems) problems.push(`secrets from the environment: ${p}`);
  const s: Secrets = { ...(fromEnv.data ?? {}), ...fileSecrets };
  const need = (key: keyof Secrets, section: string): string => {
    const v = s[key];
    if (v === undefined)
      problems.push(`${section} needs the secret ${key} (in secretsFile, or $${SECRET_ENV[key]})`);
    return v ?? "";
  };

  const cfg: FleetConfig = {
    path: abs,
    trustProxy: m.trustProxy ?? false,
    bundleKeys: (m.bundleKeys ?? []).map(at),
    schedules: m.schedules ?? defaultFleetConfig().schedules,
    secrets: [],
  };
  if (m.maxPendingEnrolments !== undefined) cfg.maxPendingEnrolments = m.maxPendingEnrolments;
  if (m.values !== undefined)
    cfg.values = { keyFile: at(m.values.keyFile), passphraseFile: at(m.values.passphraseFile) };
  if (m.db !== undefined) cfg.db = /^postgres(ql)?:\/\//.test(m.db) || m.db === ":memory:" ? m.db : at(m.db);
  if (m.listen !== undefined) cfg.listen = m.listen;
  if (m.timeZone !== undefined) cfg.timeZone = m.timeZone;
  if (m.logLevel !== undefined) cfg.logLevel = m.logLevel;
  if (m.publicUrl !== undefined) cfg.publicUrl = m.publicUrl;
  if (m.tls !== undefined) cfg.tls = { cert: at(m.tls.cert), key: at(m.tls.key) };
  if (m.reporting !== undefined) cfg.reporting = { settingsFile: at(m.reporting.settingsFile) };
  if (m.plans !== undefined && m.publicUrl === undefined)
    problems.push("plans needs publicUrl (the service calls it back)");
  addServiceSections(cfg, m, at, need);
  if (s.metricsToken !== undefined) {
    cfg.metricsToken = s.metricsToken;
    cfg.secrets.push(s.metricsToken);
  }
  cfg.secrets = cfg.secrets.filter((v) => v !== "");
  return { cfg, problems };
}

/** `doc` without the (dotted) paths given: a leaked secret is reported once, not again as an unknown key. */
function withoutPaths(doc: unknown, paths: readonly string[]): unknown {
  if (paths.length === 0 || typeof doc !== "object" || doc === null) return doc;
  const copy = structuredClone(doc) as Record<string, unknown>;
  for (const p of paths) {
    const parts = p.split(".");
    let o: unknown = copy;
    for (const k of parts.slice(0, -1))
      o = typeof o === "object" && o !== null ? (o as Record<string, unknown>)[k] : undefined;
    if (typeof o === "object" && o !== null)
      delete (o as Record<string, unknown>)[parts[parts.length - 1] ?? ""];
  }
  return copy;
}

/** The optional service sections (plans, invoices, alerts) with their secrets, added to `cfg`. */
function addServiceSections(
  cfg: FleetConfig,
  m: z.infer<typeof Main>,
  at: (f: string) => string,
  need: (key: keyof Secrets, section: string) => string,
): void {
  if (m.plans !== undefined) {
    const p = m.plans;
    cfg.plans = {
      publicUrl: m.publicUrl ?? "",
      userRedirectUrl: p.userRedirectUrl,
      countryCode: p.countryCode,
      autoReserve: p.autoReserve,
      ...(p.entitlementKeyFile === undefined ? {} : { entitlementKeyFile: at(p.entitlementKeyFile) }),
      ...(p.entitlementPassphraseFile === undefined
        ? {}
        : { entitlementPassphraseFile: at(p.entitlementPassphraseFile) }),
      callbackApiKey: need("plansCallbackApiKey", "plans"),
      csrfSecret: Buffer.from(need("plansCsrfSecret", "plans"), "utf8"),
      badgeSalt: need("badgeSalt", "plans"),
      subscriptions: { ...p.subscriptions, clientSecret: need("subscriptionsClientSecret", "plans") },
    };
    cfg.secrets.push(
      cfg.plans.callbackApiKey,
      cfg.plans.csrfSecret.toString("utf8"),
      cfg.plans.badgeSalt,
      cfg.plans.subscriptions.clientSecret,
    );
  }
  if (m.invoices !== undefined) {
    const i = m.invoices;
    const secret = need("invoicesCallbackSecret", "invoices");
    cfg.invoices = {
      baseUrl: i.baseUrl,
      accessToken: need("invoicesAccessToken", "invoices"),
      callbackAuth:
        i.callbackAuth === "basic"
          ? { kind: "basic", username: i.callbackUsername ?? "", password: secret }
          : { kind: "apikey", key: secret },
    };
    cfg.secrets.push(cfg.invoices.accessToken, secret);
  }
  if (m.alerts !== undefined) {
    const { mail, ...rest } = m.alerts;
    const alerts: AlertSettings = {
      ...rest,
      ...(m.publicUrl === undefined ? {} : { publicUrl: m.publicUrl }),
    };
    if (mail !== undefined) {
      alerts.mail = { ...mail, ...(mail.caFile === undefined ? {} : { caFile: at(mail.caFile) }) };
      if (mail.username !== undefined) {
        alerts.mail.password = need("alertsSmtpPassword", "alerts.mail.username");
        cfg.secrets.push(alerts.mail.password);
      }
    }
    if (rest.webhooks.length > 0) {
      alerts.webhookSecret = need("alertsWebhookSecret", "alerts.webhooks");
      cfg.secrets.push(alerts.webhookSecret);
    }
    cfg.alerts = alerts;
  }
}
