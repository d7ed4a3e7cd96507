/**
 * Where reconciliation finds the reporting interface (issue 17): a YAML or JSON file with the public settings,
 * and the secrets (client secret, the merchant's refresh token) in a separate secrets file or in the
 * environment, never in argv.
 *
 * ```yaml
 * baseUrl: https://api.example/transaction-reporting/api/merchant
 * tokenUrl: https://api.example/merchant-authentication-openidconnect/connect/token
 * clientId: my-integrator
 * secretsFile: reporting.secrets.yaml    # clientSecret, refreshToken (relative to this file); else env
 * timeZone: Europe/Oslo                  # days of sales (default: the fleet's, else UTC)
 * paymentPoints: [ "…" ]                 # default: every payment point of the merchant
 * points: { "<paymentPointId>": "<unit id>" }   # payment points that belong to one unit
 * transactionFee: { basisPoints: 75, points: { "<paymentPointId>": 100 } }   # optional: the agreed fee
 * ```
 *
 * The refresh token rotates at each exchange: with a secrets file the new one is written back (atomically,
 * mode 0600); from the environment (`VENDD_REPORTING_CLIENT_SECRET`, `VENDD_REPORTING_REFRESH_TOKEN`) it
 * cannot be, and the settings say so (`persistable: false`).
 */
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { type KeyLine, loadStructuredFile } from "../../config/files.js";
import { unknownKeysMessage } from "../../config/secrets.js";
import { writeFileAtomic } from "../../core/atomicFile.js";
import type { ReportingCredentials } from "../../payment/reporting/client.js";

export class ReportingSettingsError extends Error {
  override readonly name = "ReportingSettingsError";
}

const Settings = z.strictObject({
  baseUrl: z.url(),
  tokenUrl: z.url(),
  clientId: z.string().min(1),
  secretsFile: z.string().min(1).optional(),
  timeZone: z.string().min(1).optional(),
  paymentPoints: z.array(z.string().min(1)).optional(),
  points: z.record(z.string(), z.string().min(1)).optional(),
  /** The merchant's agreed transaction fee (issue 30): basis points of a payment, per point if it differs. */
  transactionFee: z
    .strictObject({
      basisPoints: z.number().int().min(0).max(10_000),
      points: z.record(z.string(), z.number().int().min(0).max(10_000)).optional(),
    })
    .optional(),
});

const Secrets = z.strictObject({
  clientSecret: z.string().min(1),
  refreshToken: z.string().min(1),
});

/** A transaction fee of `basisPoints` of each payment (per payment point where `points` says so). */
export interface FeeAgreement {
  basisPoints: number;
  points: ReadonlyMap<string, number>;
}

export interface ReportingSettings {
  credentials: ReportingCredentials;
  timeZone: string | null;
  paymentPoints: string[] | null;
  points: Map<string, string>;
  /** The agreed transaction fee, when the settings give one: reported fees are checked against it. */
  transactionFee?: FeeAgreement | null;
  /** Whether a rotated refresh token can be stored (a secrets file, not the environment). */
  persistable: boolean;
  /** Stores a rotated refresh token. */
  saveRefreshToken(token: string): void;
}

/** Reads a YAML or JSON file through the project's one loader (size limit, linear duplicate check). */
function readDoc(path: string, what: string): { value: unknown; keyLine: KeyLine } {
  const read = loadStructuredFile(path, what);
  if (!read.ok) throw new ReportingSettingsError(read.message);
  return read;
}

/**
 * `value` checked against `schema`: paths and messages only, never a value. A secrets file's unknown keys
 * (they may be secrets) are counted and located by line, never named.
 */
function check<T>(schema: z.ZodType<T>, value: unknown, what: string, keyLine?: KeyLine): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const list = r.error.issues
    .map((i) => {
      const where = i.path.join(".") || "(top)";
      if (i.code !== "unrecognized_keys" || keyLine === undefined) return `${where}: ${i.message}`;
      const at = i.path.map(String);
      return `${where}: ${unknownKeysMessage(
        i.keys.map((k) => keyLine([...at, k])),
        "a reporting secrets file holds only clientSecret and refreshToken",
      )}`;
    })
    .join("; ");
  throw new ReportingSettingsError(`${what}: ${list}`);
}

/** Loads the settings file and its secrets. */
export function loadReportingSettings(path: string, env: NodeJS.ProcessEnv = process.env): ReportingSettings {
  const s = check(Settings, readDoc(path, `reporting settings ${path}`).value, `reporting settings ${path}`);
  let secrets: z.infer<typeof Secrets>;
  let secretsPath: string | null = null;
  if (s.secretsFile !== undefined) {
    secretsPath = resolve(dirname(path), s.secretsFile);
    const read = readDoc(secretsPath, `reporting secrets ${secretsPath}`);
    secrets = check(Secrets, read.value, `reporting secrets ${secretsPath}`, read.keyLine);
  } else {
    const clientSecret = env.VENDD_REPORTING_CLIENT_SECRET;
    const refreshToken = env.VENDD_REPORTING_REFRESH_TOKEN;
    if (!clientSecret || !refreshToken)
      throw new ReportingSettingsError(
        "reporting secrets: set secretsFile in the settings, or VENDD_REPORTING_CLIENT_SECRET and VENDD_REPORTING_REFRESH_TOKEN",
      );
    secrets = { clientSecret, refreshToken };
  }
  const fixed = secretsPath;
  return {
    credentials: {
      baseUrl: s.baseUrl,
      tokenUrl: s.tokenUrl,
      clientId: s.clientId,
      clientSecret: secrets.clientSecret,
      refreshToken: secrets.refreshToken,
    },
    timeZone: s.timeZone ?? null,
    paymentPoints: s.paymentPoints ?? null,
    points: new Map(Object.entries(s.points ?? {})),
    transactionFee:
      s.transactionFee === undefined
        ? null
        : {
            basisPoints: s.transactionFee.basisPoints,
            points: new Map(Object.entries(s.transactionFee.points ?? {})),
          },
    persistable: fixed !== null,
    saveRefreshToken(token: string) {
      if (fixed === null) return;
      secrets = { ...secrets, refreshToken: token };
      writeFileAtomic(fixed, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    },
  };
}
