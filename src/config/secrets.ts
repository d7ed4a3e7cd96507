/**
 * Secrets: the V10 client secret and the older interface's API key and MerchantKey. They come from a
 * separate secrets file (mode 0600) or the environment, never from the main config, and no message built
 * here contains a secret value (reliability.md §5).
 */
import * as z from "zod";
import type { KeyLine } from "./files.js";
import { type ConfigIssue, describeIssue, toConfigIssues } from "./issues.js";
import { isRecord } from "./rules.js";
import type { PaymentDriverName } from "./schema-payment.js";

/** The secrets a unit may hold; only complete sections are present. */
export interface Secrets {
  v10?: { clientSecret: string };
  legacy?: { apiKey: string; merchantKey: string };
}

/** Environment variables that override the secrets file, one per secret. */
export const SECRET_ENV = {
  clientSecret: "VENDD_V10_CLIENT_SECRET",
  apiKey: "VENDD_LEGACY_API_KEY",
  merchantKey: "VENDD_LEGACY_MERCHANT_KEY",
} as const;

/** Environment variable naming the secrets file (after `--secrets`, before `secrets.file`). */
export const SECRETS_FILE_ENV = "VENDD_SECRETS_FILE";

const secretString = z.string({ error: "must be a string" }).min(1, "must not be empty").optional();

/** Shape of the secrets file (strict, like the main config). */
const secretsFileSchema = z.strictObject(
  {
    v10: z.strictObject({ clientSecret: secretString }, { error: "must be a mapping" }).optional(),
    legacy: z
      .strictObject({ apiKey: secretString, merchantKey: secretString }, { error: "must be a mapping" })
      .optional(),
  },
  { error: "the secrets file must be a mapping" },
);

/**
 * Validates the secrets file content, applies the environment overrides (a non-empty variable wins over
 * the file) and checks that the selected driver has what it needs.
 * @param raw parsed secrets file, or `undefined`/`null` when there is none.
 * @param driver the configured payment driver, or `undefined` when the config does not say a valid one.
 */
export function resolveSecrets(
  raw: unknown,
  env: NodeJS.ProcessEnv,
  driver: PaymentDriverName | undefined,
  keyLine: KeyLine = () => null,
): { secrets: Secrets; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  if (raw !== undefined && raw !== null) {
    const parsed = secretsFileSchema.safeParse(raw, { error: describeIssue });
    if (!parsed.success) issues.push(...secretsFileIssues(parsed.error.issues, keyLine));
  }
  // Valid values are used even when a sibling is malformed, so that one run reports only real problems.
  const pick = (section: "v10" | "legacy", name: keyof typeof SECRET_ENV): string | undefined => {
    const fromEnv = env[SECRET_ENV[name]];
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
    const part = isRecord(raw) ? raw[section] : undefined;
    const value = isRecord(part) ? part[name] : undefined;
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const clientSecret = pick("v10", "clientSecret");
  const apiKey = pick("legacy", "apiKey");
  const merchantKey = pick("legacy", "merchantKey");

  const secrets: Secrets = {};
  if (clientSecret !== undefined) secrets.v10 = { clientSecret };
  if (apiKey !== undefined && merchantKey !== undefined) secrets.legacy = { apiKey, merchantKey };

  const missing = (section: string, name: keyof typeof SECRET_ENV): ConfigIssue => ({
    path: `secrets.${section}.${name}`,
    message:
      `required by payment.driver ${section}: set ${SECRET_ENV[name]} or put ${section}.${name} in the ` +
      `secrets file (--secrets, ${SECRETS_FILE_ENV} or secrets.file)`,
  });
  const alreadyReported = (path: string) => issues.some((i) => i.path === path);
  if (driver === "v10" && clientSecret === undefined && !alreadyReported("secrets.v10.clientSecret")) {
    issues.push(missing("v10", "clientSecret"));
  }
  if (driver === "legacy") {
    if (apiKey === undefined && !alreadyReported("secrets.legacy.apiKey"))
      issues.push(missing("legacy", "apiKey"));
    if (merchantKey === undefined && !alreadyReported("secrets.legacy.merchantKey")) {
      issues.push(missing("legacy", "merchantKey"));
    }
  }
  return { secrets, issues };
}

/**
 * The problems of a secrets file, never quoting it: a key there may be a secret (a password pasted as a
 * line of its own, another program's file given by mistake), so unknown keys are counted and located by
 * line, never named.
 */
function secretsFileIssues(issues: readonly z.core.$ZodIssue[], keyLine: KeyLine): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const iss of issues) {
    if (iss.code !== "unrecognized_keys") {
      out.push(...toConfigIssues([iss], "secrets", false));
      continue;
    }
    const at = iss.path.map(String);
    out.push({
      path: ["secrets", ...at].join("."),
      message: unknownKeysMessage(
        iss.keys.map((k) => keyLine([...at, k])),
        "a unit's secrets file holds only v10.clientSecret, legacy.apiKey and legacy.merchantKey",
      ),
    });
  }
  return out;
}

/** `N unknown key(s) (lines a, b, c)`, then what may be there; the keys themselves are never shown. */
export function unknownKeysMessage(lines: readonly (number | null)[], allowed: string): string {
  const known = lines.filter((l): l is number => l !== null).sort((a, b) => a - b);
  const shown = known.slice(0, 20).join(", ") + (known.length > 20 ? `, … (${known.length - 20} more)` : "");
  const where = known.length === 0 ? "" : ` (line${known.length === 1 ? "" : "s"} ${shown})`;
  return `${lines.length} unknown key${lines.length === 1 ? "" : "s"}${where}, not shown because a secrets file's keys may be secrets; ${allowed}`;
}

/** Every secret value held, for a `SecretRegistry` that scrubs them from log lines. */
export function secretValues(secrets: Secrets): string[] {
  const out: string[] = [];
  if (secrets.v10) out.push(secrets.v10.clientSecret);
  if (secrets.legacy) out.push(secrets.legacy.apiKey, secrets.legacy.merchantKey);
  return out;
}
