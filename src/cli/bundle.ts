/**
 * `vendd bundle create|sign|verify|apply|pull`: signed config and release bundles (README "Updates").
 * Exit codes: 0 done (or nothing to do), 1 refused, rolled back or failed, 2 usage error.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseArgs } from "node:util";
import type { Dispatcher } from "undici";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, type VenddConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { systemClock } from "../core/clock.js";
import { defaultControlSocket } from "../core/control.js";
import { expiryText } from "../core/days.js";
import { updateFaultPointsFromEnv } from "../core/faults.js";
import { FleetCaError, fleetDispatcher } from "../core/fleetCa.js";
import { fleetBundleUrl } from "../core/fleetWire.js";
import { printable } from "../core/printable.js";
import { type ApplyReport, applyBundleFile, applyInbox, recoverInterrupted } from "../update/apply.js";
import type { ApplyEnv } from "../update/applyRun.js";
import {
  addSignature,
  BundleError,
  createBundle,
  parseTrustedComment,
  readBundle,
  trustedCommentOf,
  verifyBundle,
} from "../update/bundle.js";
import { commandRestarter, controlSocketProbe } from "../update/health.js";
import { waitingInInbox, waitingLines } from "../update/inboxWaiting.js";
import {
  decryptSecretKey,
  formatSignature,
  MinisignError,
  type PublicKey,
  parsePublicKey,
  parseSignature,
  secretKeyEncrypted,
  signData,
  verifySignature,
} from "../update/minisign.js";
import { fleetPullKey, pullBundle } from "../update/pull.js";
import { readUpdateOutcome, type UpdateOutcome } from "../update/state.js";
import { spoolStep } from "../update/stepSpool.js";
import { renderCommandUsage } from "./commandTable.js";
import { readPassphrase } from "./keys.js";
import { BUNDLE_OPTIONS, UPDATE_COMMANDS } from "./updateCommands.js";

const USAGE = `${renderCommandUsage(UPDATE_COMMANDS.filter((c) => c.command === "bundle"))}
A bundle is a tar of payload.tar (manifest.json, config.yaml, release.tar.gz) and signatures/N.minisig,
minisign signatures of payload.tar whose trusted comment carries the version, targets and expiry. create
prints that trusted comment: to sign with the minisign tool instead, extract payload.tar, run
  minisign -S -s KEY -m payload.tar -t "<the comment>"
and attach payload.tar.minisig with --attach. apply and pull read the keys, fleet and paths from the config
in force (--config, default ${DEFAULT_CONFIG_FILE}) and run as root (vendd-bundle.service, vendd-pull.service).
--targets and --release: a comma-separated list of fleet names and unit ids; DATE: YYYY-MM-DD or ISO 8601.
pull fetches from the fleet's bundle address, <fleet.url>/api/unit/v1/bundle (a signed GET with the unit's
fleet key), or from updates.pullUrl when the config sets one.
`;

type Values = {
  [K in keyof typeof BUNDLE_OPTIONS]?: (typeof BUNDLE_OPTIONS)[K]["type"] extends "boolean"
    ? boolean
    : string;
};

class UsageError extends Error {}

function need(values: Values, name: keyof Values): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

function loadUnitConfig(file: string): VenddConfig {
  return loadConfig(file, { requireSecrets: false }).config;
}

/** The production applier: systemd restart, the daemon's control socket, the real clock. */
export function productionEnv(configFile: string): ApplyEnv {
  return {
    configFile,
    loadConfig: loadUnitConfig,
    // The restart command of the config in force at that moment (the new one, or the restored one).
    restart: () => commandRestarter(loadUnitConfig(configFile).updates.restartCommand)(),
    probeFor: (config) =>
      controlSocketProbe(config.console.socket ?? defaultControlSocket(config.journal.path)),
    clock: systemClock,
    faults: updateFaultPointsFromEnv(process.env),
    log: (line) => process.stderr.write(`vendd bundle: ${line}\n`),
    // Issue 41: each step into the inbox's spool, which the daemon sends to the fleet (only with a fleet link).
    step: (st) => {
      const c = loadUnitConfig(configFile);
      if (c.fleet !== undefined) spoolStep(c.updates.inbox, { ...st, at: systemClock.now() });
    },
  };
}

function describe(o: UpdateOutcome): string {
  const what = o.version === null ? "bundle" : `version ${o.version}${o.kind === null ? "" : ` (${o.kind})`}`;
  switch (o.result) {
    case "committed":
      return `committed ${what} from ${o.source}`;
    case "rolled_back":
      return `rolled back ${what} from ${o.source}: ${o.reason ?? ""} [${o.code ?? ""}]`;
    case "refused":
      return `refused ${what} from ${o.source}: ${o.reason ?? ""} [${o.code ?? ""}]`;
  }
}

function printReport(report: ApplyReport, json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    if (report.recovered !== null) process.stdout.write(`interrupted apply: ${describe(report.recovered)}\n`);
    for (const o of report.outcomes) process.stdout.write(`${describe(o)}\n`);
    if (report.recovered === null && report.outcomes.length === 0) process.stdout.write("nothing to apply\n");
  }
  return report.outcomes.every((o) => o.result === "committed") ? 0 : 1;
}

async function create(values: Values): Promise<number> {
  const configFile = need(values, "config");
  // The config must be valid before it is signed: the unit would refuse it anyway.
  loadConfig(configFile, { requireSecrets: false });
  const release = values.release === undefined ? null : readFileSync(values.release);
  const version = Number(need(values, "version"));
  const { bundle, manifest } = createBundle({
    configText: readFileSync(configFile, "utf8"),
    release,
    version,
    targets: need(values, "targets").split(","),
    expires: need(values, "expires"),
  });
  const out = need(values, "out");
  writeFileAtomic(out, bundle);
  // The trusted comment (standard output) is for scripts; people read the expiry as the day they gave.
  process.stderr.write(
    `bundle ${printable(out)}: version ${manifest.version}, expires ${expiryText(Date.parse(manifest.expires))}\n`,
  );
  process.stdout.write(
    values.json === true
      ? `${JSON.stringify({ file: out, manifest, trustedComment: trustedCommentOf(manifest) })}\n`
      : `${trustedCommentOf(manifest)}\n`,
  );
  return 0;
}

async function sign(file: string, values: Values): Promise<number> {
  const bundle = readInput(file);
  const contents = readBundle(bundle);
  let sigText: string;
  if (values.attach !== undefined) {
    sigText = readFileSync(values.attach, "utf8");
    // An attached signature must describe this payload: the trusted comment minisign was given.
    const meta = parseTrustedComment(parseSignature(sigText).trustedComment);
    if (meta.id !== contents.manifest.id) {
      throw new BundleError("another_file", `the signature is for another bundle (id ${meta.id})`);
    }
  } else {
    const keyText = readFileSync(need(values, "secret-key"), "utf8");
    // A key made without a passphrase (`minisign -G -W`) needs none.
    const passphrase = secretKeyEncrypted(keyText)
      ? await readPassphrase(values["passphrase-file"], "Passphrase of the secret key: ")
      : "";
    if (passphrase !== "")
      process.stderr.write(
        "vendd bundle: deriving the key from the passphrase (scrypt, as the key was made: up to a minute on a Pi)...\n",
      );
    const sk = await decryptSecretKey(keyText, passphrase);
    const sig = signData(contents.payload, sk, trustedCommentOf(contents.manifest));
    verifySignature(contents.payload, sig, sk.publicKey);
    sigText = formatSignature(sig);
  }
  writeFileAtomic(file, addSignature(bundle, sigText));
  process.stdout.write(`signed ${printable(file)}\n`);
  return 0;
}

function keysFor(values: Values): { keys: PublicKey[]; threshold: number; keySource?: string } {
  const file = values["public-key"];
  if (file !== undefined) {
    return {
      keys: [parsePublicKey(readFileSync(file, "utf8"))],
      threshold: 1,
      keySource: `--public-key ${printable(file, 200)}`,
    };
  }
  const config = loadUnitConfig(values.config ?? DEFAULT_CONFIG_FILE);
  return {
    keys: config.updates.publicKeys.map((k) => parsePublicKey(k)),
    threshold: config.updates.threshold,
  };
}

async function verify(file: string, values: Values): Promise<number> {
  const { keys, threshold, keySource } = keysFor(values);
  const v = verifyBundle(readInput(file), {
    keys,
    releaseThreshold: threshold,
    ...(keySource === undefined ? {} : { keySource }),
  });
  const expired = Date.parse(v.meta.expires) <= Date.now();
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ ok: true, ...v.meta, signers: v.signers, expired })}\n`);
  } else {
    process.stdout.write(
      `ok: version ${v.meta.version} (${v.meta.kind}) for ${v.meta.targets.join(", ")}, expires ${expiryText(Date.parse(v.meta.expires))}` +
        `${expired ? " (EXPIRED)" : ""}, signed by ${v.signers.join(", ")}\n`,
    );
  }
  return 0;
}

/** `bundle apply FILE | --inbox DIR | --recover`. */
async function applyAction(file: string | undefined, values: Values, configFile: string): Promise<number> {
  const env = productionEnv(configFile);
  const json = values.json === true;
  if (values.recover === true) {
    const o = await recoverInterrupted(env);
    return printReport({ recovered: o, outcomes: [] }, json);
  }
  if (values.inbox !== undefined) {
    if (file !== undefined) throw new UsageError("give a FILE or --inbox DIR, not both");
    return printReport(await applyInbox(values.inbox, env), json);
  }
  if (file === undefined) throw new UsageError("apply needs a FILE, --inbox DIR or --recover");
  return printReport(await applyBundleFile(file, env), json);
}

/** `bundle pull`: what the timer runs (an interrupted apply first, then the fleet's or pullUrl's bundle). */
async function pullAction(values: Values, configFile: string): Promise<number> {
  const env = productionEnv(configFile);
  const unitConfig = loadUnitConfig(configFile);
  const u = unitConfig.updates;
  const fleetKey = fleetPullKey(unitConfig);
  // The fleet's own address when the unit has a fleet and no other pull address (fleetWire.ts fleetBundleUrl).
  const url = u.pullUrl ?? (unitConfig.fleet === undefined ? null : fleetBundleUrl(unitConfig.fleet.url));
  if (url === null)
    throw new UsageError(
      "nothing to pull from: set fleet.url (the fleet's bundle address is <fleet.url>/api/unit/v1/bundle) or updates.pullUrl in the config",
    );
  // The timer also runs after a reboot: an apply cut off by power loss is finished or rolled back
  // first, whether or not a new bundle is waiting.
  const recovered = await recoverInterrupted(env);
  if (recovered !== null && values.json !== true) {
    process.stdout.write(`interrupted apply: ${describe(recovered)}\n`);
  }
  // The fleet's private CA (fleet.caFile) for a pull from the fleet's own origin.
  const fleet = unitConfig.fleet;
  let dispatcher: Dispatcher | undefined;
  try {
    dispatcher =
      fleet !== undefined && new URL(url).origin === new URL(fleet.url).origin
        ? fleetDispatcher(fleet.caFile)
        : undefined;
  } catch (err) {
    if (err instanceof FleetCaError) throw new UsageError(err.message);
    throw err;
  }
  const r = await pullBundle(env, {
    ...(dispatcher === undefined ? {} : { dispatcher }),
    url,
    stateDir: u.stateDir,
    minBackoffMs: u.pull.minBackoffMs,
    maxBackoffMs: u.pull.maxBackoffMs,
    timeoutMs: u.pull.timeoutMs,
    random: Math.random,
    ...(fleetKey === null ? {} : { key: fleetKey }),
  });
  await dispatcher?.close();
  if (r.result === "applied") return printReport(r.report, values.json === true);
  process.stdout.write(values.json === true ? `${JSON.stringify(r)}\n` : `${pullLine(r)}\n`);
  return r.result === "failed" ? 1 : 0;
}

/** `bundle status`: the applier's high-water mark, an apply in progress, the last outcome. */
function statusAction(file: string | undefined, values: Values, configFile: string): number {
  if (file !== undefined) throw new UsageError("status takes no file argument");
  const u = loadUnitConfig(configFile).updates;
  const st = readUpdateOutcome(u.stateDir);
  // Issue 43: what waits in the inbox for the applier (a console's config apply, a bundle dropped there).
  const files = waitingInInbox(u.inbox);
  const waitingNow = waitingLines(u.inbox, files, Date.now(), configFile);
  if (values.json === true)
    process.stdout.write(
      `${JSON.stringify({ ...st, waiting: files.map((f) => ({ file: join(u.inbox, f.name), since: new Date(f.since).toISOString() })) })}\n`,
    );
  else {
    const lines = [`high-water mark: ${st.highWater}`];
    if (st.pending !== null) {
      lines.push(
        `apply in progress: version ${st.pending.version} (${st.pending.phase}) since ${st.pending.startedAt}`,
      );
    }
    lines.push(
      `last outcome: ${st.outcome === null ? "none" : `${describe(st.outcome)} at ${st.outcome.at}`}`,
    );
    if (st.problem !== null) lines.push(`problem: ${st.problem}`);
    lines.push(...(waitingNow.length === 0 ? [`nothing waits in ${u.inbox}`] : waitingNow));
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  return st.problem === null ? 0 : 1;
}

/** The exit code of a refusal, after its message on standard error; anything else is thrown on. */
function refused(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`vendd bundle: ${err.message}\n${USAGE}`);
    return 2;
  }
  if (err instanceof BundleError || err instanceof MinisignError) {
    process.stderr.write(`vendd bundle: refused [${err.code}]: ${err.message}\n`);
    return 1;
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`vendd bundle: ${err.message}\n`);
    return 1;
  }
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code === "string" && typeof e.path === "string") {
    process.stderr.write(`vendd bundle: ${fileProblem(e.path, e.code)}\n`);
    return 1;
  }
  throw err;
}

export async function bundleCommand(argv: string[]): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: BUNDLE_OPTIONS,
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`vendd bundle: ${err instanceof Error ? err.message : "bad arguments"}\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [action, file, ...extra] = positionals;
  try {
    if (extra.length > 0) throw new UsageError(`unexpected ${printable(extra.join(" "), 64)}`);
    const configFile = values.config ?? DEFAULT_CONFIG_FILE;
    switch (action) {
      case "create":
        if (file !== undefined) throw new UsageError("create takes no file argument (use --out)");
        return await create(values);
      case "sign":
        if (file === undefined) throw new UsageError("sign needs the bundle FILE");
        return await sign(file, values);
      case "verify":
        if (file === undefined) throw new UsageError("verify needs the bundle FILE");
        return await verify(file, values);
      case "apply":
        return await applyAction(file, values, configFile);
      case "pull":
        return await pullAction(values, configFile);
      case "status":
        return statusAction(file, values, configFile);
      default:
        throw new UsageError("expected create, sign, verify, apply, pull or status");
    }
  } catch (err) {
    return refused(err);
  }
}

/** Reads a file the user named; an error carries that path (Node's EISDIR has none). */
function readInput(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code === "string" && e.path === undefined) e.path = file;
    throw e;
  }
}

/** What is wrong with a file the command read or wrote, and what to do: never a temporary file's name. */
function fileProblem(path: string, code: string): string {
  // writeFileAtomic writes `.NAME.tmp` beside NAME first: the file the user named is NAME.
  const name = basename(path);
  const tmp = /^\.(.+)\.tmp$/.exec(name);
  const file = printable(tmp?.[1] === undefined ? path : join(dirname(path), tmp[1]));
  switch (code) {
    case "ENOENT":
      return tmp === null
        ? `${file}: no such file; check the path`
        : `cannot write ${file}: its directory ${printable(dirname(path))} does not exist; create it or choose another --out`;
    case "EISDIR":
      return `${file} is a directory; give a bundle file (e.g. ${file}/NAME.vb)`;
    case "EACCES":
    case "EPERM":
      return `${file}: permission denied; run as a user that may ${tmp === null ? "read" : "write"} it`;
    case "ENOTDIR":
      return `${file}: a part of the path is a file, not a directory; check the path`;
    default:
      return `cannot use ${file}: ${code}`;
  }
}

function pullLine(r: Exclude<Awaited<ReturnType<typeof pullBundle>>, { result: "applied" }>): string {
  switch (r.result) {
    case "backing_off":
      return `backing off after ${r.failures} failure(s) until ${r.until}`;
    case "not_modified":
      return "no new bundle (304 Not Modified)";
    case "failed":
      return `pull failed (${r.reason}); next try after ${r.nextTryAt}`;
  }
}
