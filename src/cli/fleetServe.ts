/**
 * `vendd fleet serve`: runs the fleet server until SIGTERM or SIGINT, then closes it cleanly (in-flight
 * requests finish, the database is closed). `vendd fleet serve` alone serves ./fleet.db on 127.0.0.1:8380.
 */

import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setFlagsFromString } from "node:v8";
import { systemClock } from "../core/clock.js";
import { causeOf, closeOnExit } from "../core/fatal.js";
import { fleetServerFaultPointsFromEnv, NO_FLEET_SERVER_FAULTS } from "../core/faults.js";
import { ed25519Checker } from "../core/fleetAuth.js";
import { printable } from "../core/printable.js";
import { createNotifier } from "../core/sdnotify.js";
import { CallbackChecks, registerCallbacks } from "../fleet/callbackChecks.js";
import {
  defaultFleetConfig,
  type FleetConfig,
  FleetConfigError,
  problemsMessage,
  readFleetConfig,
} from "../fleet/config.js";
import { FleetDbError } from "../fleet/db/open.js";
import { type FleetServices, fleetPlugins, startFleetJobs } from "../fleet/features.js";
import { loadEntitlementKey } from "../fleet/plans/index.js";
import { loadReportingSettings, ReportingSettingsError } from "../fleet/reconcile/settings.js";
import { type RunningFleetServer, startFleetServer } from "../fleet/server.js";
import { InvoicesClient } from "../payment/invoices/client.js";
import { SubscriptionsClient } from "../payment/subscriptions/client.js";
import type { SecretKey } from "../update/minisign.js";
import { type PublicKey, parsePublicKey } from "../update/minisign.js";
import { openSecretKeyFile } from "../update/minisignSecretKey.js";
import {
  checkTimeZone,
  FLEET_SERVER_USAGE,
  FleetUsageError,
  parseFleetArgs,
  parseListen,
} from "./fleetOptions.js";

const DEFAULT_LISTEN = "127.0.0.1:8380";

/** A minisign public key file for `--bundle-key`; FleetUsageError when unreadable or not a key. */
function readBundleKey(file: string): PublicKey {
  try {
    return parsePublicKey(readFileSync(file, "utf8"));
  } catch (err) {
    throw new FleetUsageError(
      `--bundle-key ${printable(file, 200)}: ${err instanceof Error ? err.message : "unreadable"}`,
    );
  }
}

function reportingZone(given: string | undefined, env: NodeJS.ProcessEnv): string {
  if (given !== undefined) return checkTimeZone(given);
  const tz = env.TZ;
  if (tz === undefined || tz === "") return "UTC";
  try {
    return checkTimeZone(tz);
  } catch {
    process.stderr.write(
      `vendd fleet serve: TZ=${printable(tz, 64)} is not a time zone; counting days in UTC\n`,
    );
    return "UTC";
  }
}

/** Builds the clients and settings of the configured sections (reads the entitlement key). */
export async function servicesOf(cfg: FleetConfig, problems: string[]): Promise<FleetServices> {
  const services: FleetServices = {};
  const reporting = cfg.reporting;
  // Loaded at each run, so a rotated refresh token written to its secrets file is picked up.
  if (reporting !== undefined) {
    try {
      loadReportingSettings(reporting.settingsFile); // refuse to start on a broken reporting file
    } catch (err) {
      if (!(err instanceof ReportingSettingsError)) throw err;
      problems.push(`reporting.settingsFile: ${err.message}`);
    }
    services.reporting = () => loadReportingSettings(reporting.settingsFile);
  }
  const p = cfg.plans;
  if (p !== undefined) {
    let entitlementKey: Awaited<ReturnType<typeof loadEntitlementKey>> | null = null;
    if (p.entitlementKeyFile !== undefined && p.entitlementPassphraseFile !== undefined) {
      try {
        entitlementKey = await loadEntitlementKey(p.entitlementKeyFile, p.entitlementPassphraseFile);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        problems.push(
          `plans.entitlementKeyFile: ${code === undefined ? (e as Error).message : `${code} reading the key or passphrase file`}`,
        );
      }
    }
    services.plans = {
      client: new SubscriptionsClient({ ...p.subscriptions, clock: systemClock }),
      settings: {
        publicUrl: p.publicUrl,
        userRedirectUrl: p.userRedirectUrl,
        callbackApiKey: p.callbackApiKey,
        csrfSecret: p.csrfSecret,
        badgeSalt: p.badgeSalt,
        entitlementKey,
        countryCode: p.countryCode,
        autoReserve: p.autoReserve,
      },
    };
  }
  const i = cfg.invoices;
  if (i !== undefined) {
    const token = i.accessToken;
    services.invoices = {
      client: new InvoicesClient({
        baseUrl: i.baseUrl,
        accessToken: () => token,
        clock: systemClock,
        random: Math.random,
      }),
      auth: i.callbackAuth,
    };
  }
  if (cfg.alerts !== undefined) services.alerts = cfg.alerts;
  if (cfg.metricsToken !== undefined) services.metricsToken = cfg.metricsToken;
  if (services.plans !== undefined || services.invoices !== undefined)
    services.callbacks = new CallbackChecks();
  return services;
}

/** The values key (issue 41, `values` of the fleet config), opened at start; a problem refuses to serve. */
async function valuesKeyOf(cfg: FleetConfig, problems: string[]): Promise<SecretKey | undefined> {
  if (cfg.values === undefined) return undefined;
  try {
    return await openSecretKeyFile(cfg.values.keyFile, cfg.values.passphraseFile, "values key");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    problems.push(
      `values.keyFile: ${code === undefined ? (e as Error).message : `${code} reading the key or passphrase file`}`,
    );
    return undefined;
  }
}

/**
 * Tells the payment services where to call back (once at start; serving goes on either way): each answer is
 * kept for the dashboard, which shows a refusal on every page, and a refusal is logged.
 */
async function configureCallbacks(
  cfg: FleetConfig,
  s: FleetServices,
  log: RunningFleetServer["ctx"]["logger"],
) {
  const checks = await registerCallbacks(s, cfg.publicUrl, Date.now);
  s.callbacks?.record(checks);
  for (const c of checks)
    if (c.refusal !== null)
      log.error(
        { service: c.service, url: c.url, error: c.refusal },
        `${c.service}: could not set the callback URL at the service`,
      );
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new FleetUsageError(
      `tls.${what} ${printable(file, 200)}: ${(e as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}

/**
 * V8 settings for a long-running server, set before the first request. Allocation-site pretenuring off:
 * under bursts of requests V8 saw request objects survive young-generation collections and began
 * allocating them straight into the old generation, where they died and waited for the next full GC. The
 * fleet process's heap and array buffers then grew steadily between full GCs (+35 to +46 MB over 3 minutes
 * of the fleet bench in most runs; a forced full GC took them back), and its p99 was longer. With it off:
 * +2.5 and +4.4 MB on PostgreSQL, 15.4 and −2.2 MB on SQLite, p99 lower (README, fleet bench). V8 reads this
 * flag at each collection's pretenuring decision, so setting it at run time takes effect.
 */
export function serverHeap(): void {
  setFlagsFromString("--no-allocation-site-pretenuring");
}

/** True for an address only this machine reaches (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return (
    h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1"
  );
}

/** What the operator must hear at start-up: plain HTTP off this machine, bundles nobody checks. */
function startupWarnings(
  logger: { warn(obj: object, msg: string): void },
  s: { host: string; https: boolean; bundleKeys: readonly PublicKey[] },
): void {
  if (!s.https && !isLoopback(s.host))
    logger.warn(
      { listen: s.host, docs: "docs/fleet-server.md" },
      "serving plain HTTP on a non-loopback address: passwords and session cookies cross the network unencrypted; set up TLS (tls: in the fleet config, or a TLS proxy with trustProxy), see docs/fleet-server.md",
    );
  if (s.bundleKeys.length === 0)
    logger.warn(
      { bundleKeys: 0 },
      "no bundle keys (bundleKeys in the fleet config, or --bundle-key): uploaded bundles are stored without a signature check and shown unverified on the dashboard",
    );
}

/** Binds `listen` and lets it go again; rejects with the bind's error (EADDRINUSE, EACCES...). */
function probeListen(listen: { host: string; port: number }): Promise<void> {
  if (listen.port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(listen.port, listen.host, () => probe.close(() => resolve()));
  });
}

/** Why the server could not start: what, where (the address or the database) and the next step. */
function startFailure(err: unknown, listen: { host: string; port: number }): string {
  if (err instanceof FleetDbError) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  const at = `${listen.host}:${listen.port}`;
  const next = "(--listen, or listen in the fleet config)";
  if (code === "EADDRINUSE")
    return `cannot listen on ${at}: another process uses that address; stop it or choose another ${next}`;
  if (code === "EACCES")
    return `cannot listen on ${at}: not permitted (a port below 1024 needs privileges); choose another ${next}`;
  if (code === "EADDRNOTAVAIL")
    return `cannot listen on ${at}: no such address on this machine; choose another ${next}`;
  return `could not start: ${causeOf(err)}`;
}

/** What `fleet serve` runs with: its arguments, the fleet config and what they name. */
interface ServeSettings {
  args: ReturnType<typeof parseFleetArgs>;
  listen: { host: string; port: number };
  timeZone: string;
  bundleKeys: PublicKey[];
  cfg: FleetConfig;
  services: FleetServices;
  https: { cert: Buffer; key: Buffer } | undefined;
  /** The values key (issue 41), when the config has a `values` section. */
  valuesKey: SecretKey | undefined;
}

/** The settings from the arguments and the config file, or the exit code (help, a usage or config error). */
async function serveSettings(argv: string[]): Promise<ServeSettings | number> {
  try {
    const args = parseFleetArgs(argv);
    if (args.help) {
      process.stdout.write(FLEET_SERVER_USAGE);
      return 0;
    }
    if (args.positionals.length > 0)
      throw new FleetUsageError(`unexpected ${printable(args.positionals.join(" "), 64)}`);
    const read =
      args.config === undefined ? { cfg: defaultFleetConfig(), problems: [] } : readFleetConfig(args.config);
    const { cfg } = read;
    // Every problem of the file and of the files it names, in one start (issue 43), not one per start.
    const problems = [...read.problems];
    const attempt = <T>(f: () => T): T | undefined => {
      try {
        return f();
      } catch (err) {
        if (err instanceof FleetUsageError && args.config === undefined) throw err;
        if (!(err instanceof FleetUsageError || err instanceof FleetConfigError)) throw err;
        problems.push(err.message);
        return undefined;
      }
    };
    // Flags (and $VENDD_FLEET_DB) override the file.
    const bundleKeys: PublicKey[] = [];
    for (const file of args.bundleKeys.length > 0 ? args.bundleKeys : cfg.bundleKeys) {
      const key = attempt(() => readBundleKey(file));
      if (key !== undefined) bundleKeys.push(key);
    }
    const listen = attempt(() => parseListen(args.listen ?? cfg.listen ?? DEFAULT_LISTEN));
    const timeZone = attempt(() => reportingZone(args.timeZone ?? cfg.timeZone, process.env));
    const tls = cfg.tls;
    const cert = tls === undefined ? undefined : attempt(() => readPem(tls.cert, "cert"));
    const key = tls === undefined ? undefined : attempt(() => readPem(tls.key, "key"));
    const services = await servicesOf(cfg, problems);
    const valuesKey = await valuesKeyOf(cfg, problems);
    if (problems.length > 0 || listen === undefined || timeZone === undefined)
      throw new FleetConfigError(problemsMessage(cfg.path ?? "(flags)", problems));
    const https = cert === undefined || key === undefined ? undefined : { cert, key };
    return { args, listen, timeZone, bundleKeys, cfg, services, https, valuesKey };
  } catch (err) {
    if (err instanceof FleetUsageError) {
      process.stderr.write(`vendd fleet serve: ${err.message}\n${FLEET_SERVER_USAGE}`);
      return 2;
    }
    if (err instanceof FleetConfigError || err instanceof ReportingSettingsError) {
      process.stderr.write(`vendd fleet serve: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

/** Serves until SIGTERM or SIGINT, then stops the jobs and the server: the exit code. */
function serveUntilSignal(
  server: RunningFleetServer,
  jobs: ReturnType<typeof startFleetJobs>,
  notifier: ReturnType<typeof createNotifier>,
  stopWatchdog: () => void,
  timeZone: string,
): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      server.ctx.logger.info({ signal }, "fleet server stopping");
      notifier.stopping();
      stopWatchdog();
      jobs
        .stop()
        .then(() => server.close())
        .then(
          () => resolve(0),
          (err: unknown) => {
            process.stderr.write(`vendd fleet serve: ${err instanceof Error ? err.message : String(err)}\n`);
            resolve(1);
          },
        );
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    // Printed once the handlers are in place: whoever reads the URL may stop the server at once.
    process.stdout.write(
      `vendd fleet: serving ${server.url} (database ${server.where}, sales days in ${timeZone})\n`,
    );
  });
}

export async function fleetServeCommand(argv: string[]): Promise<number> {
  const settings = await serveSettings(argv);
  if (typeof settings === "number") return settings;
  const { args, listen, timeZone, bundleKeys, cfg, services, https } = settings;
  const db = args.dbGiven || cfg.db === undefined ? args.db : cfg.db;
  // Only the fleet's own fault points: a unit's VENDD_FAULT_POINT in the same environment arms nothing here.
  const spec = process.env.VENDD_FAULT_POINT ?? "";
  const faults = spec.startsWith("fleet.")
    ? fleetServerFaultPointsFromEnv(process.env)
    : NO_FLEET_SERVER_FAULTS;
  const logLevel = args.logLevel ?? cfg.logLevel;
  serverHeap();
  let server: RunningFleetServer;
  try {
    // The address first: a port in use is known in milliseconds, before the database is opened or migrated.
    await probeListen(listen);
    server = await startFleetServer({
      db,
      host: listen.host,
      port: listen.port,
      timeZone,
      faults,
      bundleKeys,
      plugins: fleetPlugins(services, { secureCookies: https !== undefined || cfg.trustProxy }),
      entitlements: services.plans !== undefined,
      ...(settings.valuesKey === undefined ? {} : { valuesKey: settings.valuesKey }),
      trustProxy: cfg.trustProxy,
      ...(cfg.maxPendingEnrolments === undefined ? {} : { maxPendingEnrolments: cfg.maxPendingEnrolments }),
      secrets: cfg.secrets,
      ...(https === undefined ? {} : { https }),
      ...(logLevel === undefined ? {} : { logLevel }),
    });
  } catch (err) {
    process.stderr.write(`vendd fleet serve: ${startFailure(err, listen)}\n`);
    return 1;
  }
  closeOnExit(() => server.close());
  // In the background: serving does not wait on the payment services (a failure is logged).
  void configureCallbacks(cfg, services, server.ctx.logger);
  server.ctx.logger.info({ v8: "--no-allocation-site-pretenuring" }, "server heap settings");
  server.ctx.logger.info({ ed25519: ed25519Checker() }, "unit request signatures checked by");
  startupWarnings(server.ctx.logger, { host: listen.host, https: https !== undefined, bundleKeys });
  const jobs = startFleetJobs(server.ctx, services, cfg.schedules);
  if (jobs.started.length > 0) server.ctx.logger.info({ jobs: jobs.started }, "scheduled jobs started");
  // Under systemd (vendd-fleet.service, Type=notify): READY once listening, the watchdog from the event loop.
  const notifier = createNotifier(process.env, server.ctx.logger);
  notifier.ready(`serving ${server.url}`);
  const stopWatchdog = notifier.startWatchdog();
  return serveUntilSignal(server, jobs, notifier, stopWatchdog, timeZone);
}
