/**
 * Loading the configuration: the main file (YAML or JSON) through the one schema, the secrets from their
 * own file or the environment. Startup refuses an invalid configuration with every issue listed by path;
 * there is no fallback to empty or default settings.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { printable } from "../core/printable.js";
import {
  annotateIssues,
  BoardError,
  type BoardProfile,
  boardNameOf,
  loadBoard,
  mergeUnder,
} from "./boards.js";
import { type KeyLine, readStructuredFile, secretsModeCheck } from "./files.js";
import { heldValuesFile, parseValuesDocument, SignedValues, valuesLayers } from "./fleetValues.js";
import { identityFileOf, nonIdentityPaths } from "./identity.js";
import { ConfigError, type ConfigIssue, describeIssue, toConfigIssues } from "./issues.js";
import { type Layer, type LayerName, type Merged, mergeLayers } from "./layers.js";
import { isRecord } from "./rules.js";
import {
  configSchema,
  PAYMENT_DRIVERS,
  type PaymentDriverName,
  type VenddConfig,
  type VenddConfigInput,
} from "./schema.js";
import { DEFAULT_UNIT_KEY_FILE } from "./schema-fleet.js";
import { DEFAULT_PAYMENT_DRIVER } from "./schema-payment.js";
import { resolveSecrets, SECRETS_FILE_ENV, type Secrets } from "./secrets.js";

export { ConfigError, type ConfigIssue } from "./issues.js";
export { toConfigInput, type VenddConfig, type VenddConfigInput } from "./schema.js";
export { SECRET_ENV, SECRETS_FILE_ENV, type Secrets, secretValues } from "./secrets.js";

/** Where a unit's configuration lives when a command is not given `--config` (the systemd unit's path). */
export const DEFAULT_CONFIG_FILE = "/etc/vendd/config.yaml";

/** A configuration that passed every check. */
export interface LoadedConfig {
  config: VenddConfig;
  secrets: Secrets;
  /** Problems that do not stop the unit (a secrets file readable by others, an unstable device path). */
  warnings: string[];
  /** The layers read, in merge order (src/config/layers.ts); `parseConfig` and `buildConfig` have none. */
  layers?: readonly Layer[];
  /**
   * Where the effective value at a dotted path came from: a layer's name, `board:<name>` or `default`
   * (`vendd config print --origin`).
   */
  originOf?: (path: string) => Origin;
}

/** Where an effective value came from. */
export type Origin = LayerName | `board:${string}` | "default";

export interface LoadOptions {
  /** Secrets file path (the `--secrets` flag); wins over VENDD_SECRETS_FILE and `secrets.file`. */
  secretsFile?: string;
  /** Environment to read overrides from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Directory of the board profiles; default the package's `boards/`. */
  boardsDir?: string;
  /**
   * Whether a secret the payment driver needs must be present (default true). Tools that never talk to
   * the payment service (`vendd nfc write-tag`) pass false; a malformed secrets file is still an error.
   */
  requireSecrets?: boolean;
  /** Size limit of the config and secrets files in bytes; default `MAX_FILE_BYTES` (1 MiB). */
  maxFileBytes?: number;
  /** The unit's identity file; default `identity.yaml` next to the config file (src/config/identity.ts). */
  identityFile?: string;
  /** The fleet values file (group and unit layers); default `fleet-values.json` beside `fleet.keyFile`. */
  valuesFile?: string;
}

/** Options of `parseConfig` and `buildConfig`. */
export type ParseOptions = Pick<LoadOptions, "boardsDir" | "requireSecrets">;

/**
 * Validates already-parsed content. Throws `ConfigError` listing every issue.
 * @param raw the main config as parsed from YAML/JSON.
 * @param secretsRaw the parsed secrets file, or `undefined`/`null` when secrets come only from `env`.
 */
export function parseConfig(
  raw: unknown,
  secretsRaw: unknown,
  env: NodeJS.ProcessEnv,
  opts: ParseOptions = {},
): LoadedConfig {
  const result = validate(raw, secretsRaw, env, opts);
  if (result.issues.length > 0 || result.config === undefined) throw new ConfigError(result.issues);
  return { config: result.config, secrets: result.secrets, warnings: result.warnings };
}

/**
 * Reads and validates a config file and its secrets. The secrets file is, in order: `opts.secretsFile`,
 * `$VENDD_SECRETS_FILE`, or `secrets.file` in the config (relative to the config file's directory).
 * Throws `ConfigError` listing every issue.
 */
export function loadConfig(file: string, opts: LoadOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const limit = opts.maxFileBytes === undefined ? {} : { maxBytes: opts.maxFileBytes };
  const source = printable(file);
  const main = readStructuredFile(file, { label: "(config file)", ...limit });
  if (!main.ok) throw new ConfigError(main.issues, source, "config_unreadable");

  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const layers: Layer[] = [{ name: "fleet", source: file, values: main.value }];
  const identityFile = opts.identityFile ?? identityFileOf(file);
  // A config file that is itself named like the identity file is a one-file config.
  if (resolve(identityFile) !== resolve(file) && existsSync(identityFile)) {
    const read = readStructuredFile(identityFile, { label: "(identity file)", ...limit });
    if (!read.ok) throw new ConfigError(read.issues, printable(identityFile), "config_unreadable");
    for (const path of nonIdentityPaths(read.value))
      issues.push({
        path,
        message: `is not an identity key: the identity file ${printable(identityFile)} holds only the unit's identity (config/README.md)`,
      });
    layers.push({ name: "identity", source: identityFile, values: read.value });
  }
  // The fleet's values for this unit (group and unit layers), under the identity (src/config/fleetValues.ts).
  const held = heldValues(mergeLayers(layers).raw, opts.valuesFile);
  if (held.warning !== null) warnings.push(held.warning);
  if (held.layers.length > 0) layers.splice(1, 0, ...held.layers);
  const merged = mergeLayers(layers);

  let secretsRaw: unknown;
  let keyLine: KeyLine | undefined;
  const secretsFile = secretsFilePath(file, merged.raw, opts.secretsFile, env);
  if (secretsFile !== null) {
    const read = readStructuredFile(secretsFile, { label: "secrets.file", ...limit });
    if (read.ok) {
      // Judged on the file just read (fstat of the same descriptor). A refused file is still validated, so
      // that one run lists every problem; the refusal alone keeps its secrets from being used.
      secretsRaw = read.value;
      keyLine = read.keyLine;
      const mode = secretsModeCheck(secretsFile, read.mode);
      if (mode.error !== null) issues.push({ path: "secrets.file", message: mode.error });
      if (mode.warning !== null) warnings.push(mode.warning);
    } else {
      issues.push(...read.issues);
    }
  }
  const result = validate(merged.raw, secretsRaw, env, opts, keyLine);
  issues.push(...(layers.length > 1 ? result.issues.map((i) => fromLayer(i, merged)) : result.issues));
  if (issues.length > 0 || result.config === undefined) throw new ConfigError(issues, source);
  return {
    config: result.config,
    secrets: result.secrets,
    warnings: [...warnings, ...result.warnings],
    layers,
    originOf: (path) => merged.originOf(path)?.name ?? result.boardOrigin(path),
  };
}

/**
 * The group and unit layers of the values file the daemon keeps beside the unit key (written only after it
 * verified the fleet's signature and this unit's id: src/daemon/valuesFetch.ts). A file that cannot be used
 * is a warning, never a refusal: the unit runs on its file's values rather than not at all.
 */
function heldValues(raw: unknown, file: string | undefined): { layers: Layer[]; warning: string | null } {
  const fleet = isRecord(raw) ? raw.fleet : undefined;
  if (file === undefined && !isRecord(fleet)) return { layers: [], warning: null };
  const keyFile =
    isRecord(fleet) && typeof fleet.keyFile === "string" ? fleet.keyFile : DEFAULT_UNIT_KEY_FILE;
  const valuesFile = file ?? heldValuesFile(keyFile);
  if (!existsSync(valuesFile)) return { layers: [], warning: null };
  const unit = isRecord(raw) && isRecord(raw.unit) ? raw.unit.id : undefined;
  try {
    const read = readStructuredFile(valuesFile, { label: "(fleet values)" });
    if (!read.ok) throw new Error(read.issues.map((i) => i.message).join("; "));
    const signed = SignedValues.parse(read.value);
    const doc = parseValuesDocument(signed.document, typeof unit === "string" ? unit : "");
    return { layers: valuesLayers(doc, valuesFile), warning: null };
  } catch (err) {
    return {
      layers: [],
      warning: `the fleet values in ${printable(valuesFile)} are not used: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/** An issue of a layered config names the layer (and file) the offending value came from. */
function fromLayer(issue: ConfigIssue, merged: Merged): ConfigIssue {
  const layer = merged.originOf(issue.path);
  if (layer === null) return issue;
  return { ...issue, message: `${issue.message} (from ${layer.name}: ${printable(layer.source)})` };
}

/**
 * Builds a configuration in code (the demo, tests) through the same schema: give the required keys, the
 * rest gets its defaults. Throws `ConfigError` listing every issue. Secrets are not part of it.
 */
export function buildConfig(input: VenddConfigInput, opts: ParseOptions = {}): VenddConfig {
  const board = withBoard(input, opts);
  const parsed = configSchema.safeParse(board.merged, { error: describeIssue });
  const issues = [...board.issues, ...(parsed.success ? [] : board.explain(parsed.error.issues))];
  if (!parsed.success || issues.length > 0) throw new ConfigError(issues, "buildConfig");
  return parsed.data;
}

interface Boarded {
  /** The raw config with the board's values merged under it (the raw config when there is no board). */
  merged: unknown;
  /** Problems with the board profile itself, at the path `board`. */
  issues: ConfigIssue[];
  /** The schema's issues as config issues, marked where the value came from the board. */
  explain(issues: Parameters<typeof toConfigIssues>[0]): ConfigIssue[];
  /** `board:<name>` where the board profile sets `path`, else `default`. */
  origin(path: string): Origin;
}

/**
 * Merges the named board profile (default `sim`) under the raw config, before parsing, so schema defaults
 * never mask an explicit value (src/config/boards.ts). An unknown name is left to the schema to report.
 */
function withBoard(raw: unknown, opts: ParseOptions): Boarded {
  const name = boardNameOf(raw);
  let board: BoardProfile | null = null;
  const issues: ConfigIssue[] = [];
  if (name !== null) {
    try {
      board = loadBoard(name, opts.boardsDir === undefined ? {} : { dir: opts.boardsDir });
    } catch (err) {
      if (!(err instanceof BoardError)) throw err;
      issues.push(...err.issues);
    }
  }
  const b = board;
  const boardLayer = b === null ? null : mergeLayers([{ name: "fleet", source: b.file, values: b.values }]);
  return {
    merged: b === null ? raw : mergeUnder(b.values, raw),
    issues,
    origin: (path) => (b !== null && boardLayer?.originOf(path) !== null ? `board:${b.name}` : "default"),
    explain: (zodIssues) => {
      const out = toConfigIssues(zodIssues);
      return b === null ? out : annotateIssues(out, raw, b);
    },
  };
}

interface Validation {
  config?: VenddConfig;
  secrets: Secrets;
  issues: ConfigIssue[];
  warnings: string[];
  boardOrigin(path: string): Origin;
}

function validate(
  raw: unknown,
  secretsRaw: unknown,
  env: NodeJS.ProcessEnv,
  opts: ParseOptions,
  keyLine?: KeyLine,
): Validation {
  const board = withBoard(raw, opts);
  const parsed = configSchema.safeParse(board.merged, { error: describeIssue });
  const issues = [...board.issues, ...(parsed.success ? [] : board.explain(parsed.error.issues))];
  // The driver decides which secrets are required; read it from the raw input so that a missing secret
  // is reported in the same run as the config's own errors.
  const driver = parsed.success ? parsed.data.payment.driver : rawDriver(raw);
  const required = opts.requireSecrets === false ? undefined : driver;
  const { secrets, issues: secretIssues } = resolveSecrets(secretsRaw, env, required, keyLine);
  issues.push(...secretIssues);
  const boardOrigin = board.origin;
  if (!parsed.success) return { secrets, issues, warnings: [], boardOrigin };
  return { config: parsed.data, secrets, issues, warnings: configWarnings(parsed.data), boardOrigin };
}

function rawDriver(raw: unknown): PaymentDriverName | undefined {
  if (!isRecord(raw) || !isRecord(raw.payment)) return undefined;
  const driver = raw.payment.driver;
  if (driver === undefined) return DEFAULT_PAYMENT_DRIVER;
  return PAYMENT_DRIVERS.find((d) => d === driver);
}

function configWarnings(config: VenddConfig): string[] {
  const warnings: string[] = [];
  const device = config.vmc.device;
  if (device !== null && /^\/dev\/tty(USB|ACM)\d+$/.test(device)) {
    warnings.push(
      `vmc.device ${device} may change name across reboots; prefer its /dev/serial/by-id/... link`,
    );
  }
  return warnings;
}

function secretsFilePath(
  configFile: string,
  raw: unknown,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): string | null {
  if (flag !== undefined && flag !== "") return resolve(flag);
  const fromEnv = env[SECRETS_FILE_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv);
  const section = isRecord(raw) ? raw.secrets : undefined;
  const fromConfig = isRecord(section) ? section.file : undefined;
  if (typeof fromConfig === "string" && fromConfig !== "") return resolve(dirname(configFile), fromConfig);
  return null;
}
