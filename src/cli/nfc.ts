/**
 * `vendd nfc write-tag [--config FILE] [--uri URI] [--timeout SECONDS]`: writes the check-in URI (pos-v10
 * §15) to the next tag presented that is not a technician badge, reads it back, and prints the tag's UID.
 * Exit codes: 0 written and verified, 1 failed (or no beaconId known), 2 usage error.
 */
import { parseArgs } from "node:util";
import { type Logger, pino } from "pino";
import { checkinUri } from "../../drivers/display/display.js";
import { hashBadgeUid, normaliseUid } from "../../drivers/nfc/badges.js";
import { NfcError } from "../../drivers/nfc/errors.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, type VenddConfig } from "../config/load.js";
import { configuredBeaconId, nfcOptions } from "../config/seams.js";
import { type Clock, systemClock } from "../core/clock.js";
import type { CliIo } from "./command.js";
import { renderCommandUsage } from "./commandTable.js";
import { NFC_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "nfc"))}
hash-badge prints the scrypt hash of a technician badge's UID (hex, e.g. 04A1B2C3D4E5F6) for the config's
nfc.badges list: the config holds only the hash, never the UID.

Writes the unit's check-in URI ({scheme}://pos?id={beaconId}&source=qr, from the config: payment.v10.beaconId
or payment.legacy.posUnitId) to the next NFC tag presented to the reader, reads it back and prints the tag's
UID. --uri writes another URI. Waits --timeout seconds for a tag (default 60). Default config:
${DEFAULT_CONFIG_FILE}. Secrets are not needed.
`;

/** What the command opens; the real NFC station by default (a sim station in tests). */
export interface NfcCommandDeps {
  clock: Clock;
  openStation(config: VenddConfig, clock: Clock, logger: Logger): Promise<NfcStation>;
}

const HINTS: Partial<Record<NfcError["code"], string>> = {
  notNdef: "use an NFC Forum Type 2 tag (NTAG213/215/216)",
  readOnly: "the tag is locked: use a new tag",
  tooLong: "use a tag with more memory (NTAG215/216)",
  verifyFailed: "hold the tag still on the reader and try again",
  io: "hold the tag still on the reader until the UID is printed, and try again",
  timeout: "present the tag sooner, or pass --timeout",
};

async function openRealStation(config: VenddConfig, clock: Clock, logger: Logger): Promise<NfcStation> {
  const { createNfc } = await import("../../drivers/nfc/factory.js");
  return createNfc(nfcOptions(config), { clock, logger });
}

/** Runs `vendd nfc ...` with `argv` the arguments after `nfc`. Resolves the exit code. */
export async function nfcCommand(argv: string[], io?: CliIo, deps?: NfcCommandDeps): Promise<number> {
  const out = io ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const usage = (message: string) => {
    out.stderr.write(`vendd nfc: ${message}\n${HELP}`);
    return 2;
  };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out.stdout.write(HELP);
    return 0;
  }
  if (positionals[0] === "hash-badge") {
    const uid = positionals[1];
    if (positionals.length !== 2 || uid === undefined || normaliseUid(uid) === null) {
      return usage("hash-badge takes one UID in hex (4, 7 or 10 bytes), e.g. 04A1B2C3D4E5F6");
    }
    out.stdout.write(`${await hashBadgeUid(uid)}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "write-tag")
    return usage("expected: write-tag or hash-badge");
  const timeoutS = values.timeout === undefined ? 60 : Number(values.timeout);
  if (!Number.isInteger(timeoutS) || timeoutS < 1 || timeoutS > 3600) {
    return usage("--timeout must be a whole number of seconds from 1 to 3600");
  }
  if (values.uri !== undefined && !/^[a-z][a-z0-9+.-]*:\S+$/i.test(values.uri)) {
    return usage("--uri must be an absolute URI such as servicepos://pos?id=...&source=qr");
  }
  const file = values.config ?? DEFAULT_CONFIG_FILE;
  let config: VenddConfig;
  try {
    config = loadConfig(file, { env: out.env, requireSecrets: false }).config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.stderr.write(`${err.message}\n`);
    return 1;
  }
  const beaconId = configuredBeaconId(config);
  const uri = values.uri ?? (beaconId === null ? null : checkinUri(config.display.scheme, beaconId));
  if (uri === null) {
    out.stderr.write(
      "vendd nfc: the unit's beaconId is not known: set payment.v10.beaconId (shown by the service once the PoS exists) or payment.legacy.posUnitId, or pass --uri\n",
    );
    return 1;
  }
  const clock = deps?.clock ?? systemClock;
  const logger = pino({ level: "silent" });
  const station = await (deps?.openStation ?? openRealStation)(config, clock, logger);
  try {
    const written = station.writeNextTag(uri, timeoutS * 1000);
    const state = station.readerState();
    const reader = state === "connected" ? "" : ` (no reader connected yet: ${state}; plug the reader in)`;
    out.stdout.write(`present a blank NFC tag within ${timeoutS} s to write ${uri}${reader}\n`);
    const { uid } = await written;
    out.stdout.write(`tag written and verified: uid ${uid}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof NfcError)) throw err;
    const hint = HINTS[err.code];
    out.stderr.write(`vendd nfc: write failed (${err.code}): ${err.message}${hint ? `: ${hint}` : ""}\n`);
    return 1;
  } finally {
    await station.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: NFC_OPTIONS,
  });
}
