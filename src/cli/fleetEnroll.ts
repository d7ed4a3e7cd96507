/**
 * `vendd fleet enroll [--config FILE] [--key FILE] [--url URL] [--label TEXT] [--json]`: the unit's identity
 * towards the fleet (issue 16). Makes the unit's Ed25519 key pair when the key file is missing (mode 0600,
 * written atomically; an existing key is never overwritten), prints the public key and its fingerprint (to
 * read out to the fleet manager), and with a fleet URL (flag or `fleet.url`) posts a signed enrolment and
 * prints whether the fleet has it pending or approved.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { type Dispatcher, request } from "undici";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, type VenddConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import {
  fingerprint,
  generateUnitKey,
  loadUnitKey,
  signRequest,
  type UnitKeyPair,
} from "../core/fleetAuth.js";
import { fleetDispatcher, fleetTlsHint } from "../core/fleetCa.js";
import { EnrollResponse, parseWire, UNIT_API, WireError } from "../core/fleetWire.js";
import { printable } from "../core/printable.js";
import { safeUrl } from "../core/safeUrl.js";
import { argsProblem } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS, FLEET_ENROLL_OPTIONS } from "./fleetCommands.js";

const DEFAULT_KEY_FILE = "/var/lib/vendd/fleet.key";
const TIMEOUT_MS = 15_000;

const USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet enroll")))}
Makes the unit's fleet key (--key, else fleet.keyFile, else ${DEFAULT_KEY_FILE}; mode 0600) unless it
exists, and prints its public key and fingerprint. With a fleet URL (--url, else fleet.url) it asks the
fleet to enrol this unit (unit.id of --config, default ${DEFAULT_CONFIG_FILE}) and prints pending or
approved: a fleet manager approves the unit after comparing the fingerprint.
`;

class EnrollError extends Error {}

interface Result {
  keyFile: string;
  created: boolean;
  publicKey: string;
  fingerprint: string;
  unitId: string | null;
  url: string | null;
  status: "pending" | "approved" | null;
}

function readConfig(file: string | undefined): VenddConfig | null {
  const path = file ?? DEFAULT_CONFIG_FILE;
  if (file === undefined && !existsSync(path)) return null;
  return loadConfig(path, { requireSecrets: false }).config;
}

/** Loads the key, or makes it when the file does not exist. Never overwrites. */
function ensureKey(keyFile: string): { key: UnitKeyPair; created: boolean } {
  if (existsSync(keyFile)) {
    let pem: string;
    try {
      pem = readFileSync(keyFile, "utf8");
    } catch (err) {
      throw new EnrollError(`${printable(keyFile)}: cannot read the key (${(err as Error).message})`);
    }
    try {
      return { key: loadUnitKey(pem), created: false };
    } catch (err) {
      throw new EnrollError(
        `${printable(keyFile)}: ${(err as Error).message}; it is left as it is (move it aside to make a new key)`,
      );
    }
  }
  const made = generateUnitKey();
  mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
  writeFileAtomic(keyFile, made.privatePem, { mode: 0o600 });
  return { key: made, created: true };
}

/** Posts a signed enrolment to the fleet; the answer status, or EnrollError with the operator's reason. */
export async function enroll(
  url: string,
  key: UnitKeyPair,
  unitId: string,
  label: string,
  caFile?: string,
): Promise<"pending" | "approved"> {
  const path = `${UNIT_API}/enroll`;
  const body = JSON.stringify({ unitId, label });
  const headers = signRequest(key, "POST", path, body, Date.now());
  const target = `${url.replace(/\/+$/, "")}${path}`;
  let status: number;
  let text: string;
  let dispatcher: Dispatcher | undefined;
  try {
    dispatcher = fleetDispatcher(caFile);
  } catch (err) {
    throw new EnrollError((err as Error).message);
  }
  try {
    const res = await request(target, {
      ...(dispatcher === undefined ? {} : { dispatcher }),
      method: "POST",
      body,
      headers: { ...headers, "content-type": "application/json" },
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    const shown = safeUrl(url);
    const cause = (err as Error).message.split(url).join(shown).split(target).join(safeUrl(target));
    throw new EnrollError(
      `the fleet at ${printable(shown)} is unreachable: ${printable(cause, 300)}${fleetTlsHint(err, caFile)}`,
    );
  } finally {
    await dispatcher?.close();
  }
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: reported below by status.
  }
  const wire = parseWire(WireError, parsed);
  const why = wire.ok
    ? `${wire.value.error.code}: ${printable(wire.value.error.message, 200)}`
    : `HTTP ${status}`;
  if (status === 409)
    throw new EnrollError(
      `the fleet refuses: unit id ${unitId} is already enrolled with another key (${why})`,
    );
  if (status === 401)
    throw new EnrollError(`the fleet refuses the signature (${why}); is this unit's clock right?`);
  if (status === 403) throw new EnrollError(`the fleet refuses this unit (${why})`);
  if (status < 200 || status > 299) throw new EnrollError(`the fleet answered ${status} (${why})`);
  const ok = parseWire(EnrollResponse, parsed);
  if (!ok.ok) throw new EnrollError(`the fleet's answer is not an enrolment answer (${ok.error})`);
  if (ok.value.fingerprint !== fingerprint(key.publicKey))
    throw new EnrollError(
      `the fleet reports fingerprint ${printable(ok.value.fingerprint, 40)}, not this key's: refusing to trust it`,
    );
  return ok.value.status;
}

export async function fleetEnrollCommand(argv: string[]): Promise<number> {
  let values: { [K in keyof typeof FLEET_ENROLL_OPTIONS]?: string | boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: FLEET_ENROLL_OPTIONS, allowPositionals: false }));
  } catch (err) {
    process.stderr.write(`vendd fleet enroll: ${argsProblem(err)}\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  const str = (v: string | boolean | undefined) => (typeof v === "string" && v !== "" ? v : undefined);
  try {
    const config = readConfig(str(values.config));
    const keyFile = str(values.key) ?? config?.fleet?.keyFile ?? DEFAULT_KEY_FILE;
    const url = str(values.url) ?? config?.fleet?.url ?? null;
    if (url !== null && !/^https?:\/\/[^\s]+$/.test(url))
      throw new EnrollError(
        `--url ${printable(safeUrl(url))} is not an http(s) URL (e.g. https://fleet.example)`,
      );
    const { key, created } = ensureKey(keyFile);
    const result: Result = {
      keyFile,
      created,
      publicKey: key.publicKey,
      fingerprint: fingerprint(key.publicKey),
      unitId: config?.unit.id ?? null,
      url: url === null ? null : safeUrl(url),
      status: null,
    };
    if (url !== null) {
      if (config === null)
        throw new EnrollError(
          `enrolling needs the unit's id: pass --config FILE (no ${DEFAULT_CONFIG_FILE})`,
        );
      const label = str(values.label) ?? config.unit.name;
      result.status = await enroll(url, key, config.unit.id, label.slice(0, 200), config.fleet?.caFile);
    }
    if (values.json === true) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      process.stdout.write(
        [
          `${created ? "made" : "using"} the unit key ${keyFile}`,
          `public key:  ${result.publicKey}`,
          `fingerprint: ${result.fingerprint}`,
          ...(result.status === null
            ? []
            : [
                result.status === "approved"
                  ? `enrolled at ${result.url} as ${result.unitId}: approved`
                  : `enrolled at ${result.url} as ${result.unitId}: pending (a fleet manager approves it after comparing the fingerprint)`,
              ]),
          "",
        ].join("\n"),
      );
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`vendd fleet enroll: ${err.message}\n`);
      return 1;
    }
    if (err instanceof EnrollError) {
      process.stderr.write(`vendd fleet enroll: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
