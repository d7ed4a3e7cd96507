import { randomUUID } from "node:crypto";
import { createAdminHandler } from "./admin.js";
import { CallbackNotifier } from "./callbacks.js";
import { createVirtualClock } from "./clock.js";
import { currencyOfMerchant } from "./currency.js";
import { EmulatorInputError } from "./errors.js";
import { type FaultRule, FaultSchedule } from "./http/faults.js";
import { type EmuHttpEvent, startHttpServer } from "./http/server.js";
import { HttpsCallbackClient } from "./invoices/https.js";
import { createInvoicesInterface, type InvoicesInfo } from "./invoices/index.js";
import { createLedger } from "./ledger.js";
import { createLegacyInterface } from "./legacy/index.js";
import { createOnlineInterface, type OnlineInfo } from "./online/index.js";
import { createReporting, type ReportingControl } from "./reporting/index.js";
import { DEFAULT_MERCHANT, makeStore, randomSecret, type SeedFile } from "./seed.js";
import { type EmulatorStats, StatsRecorder } from "./stats.js";
import {
  createSubscriptions,
  type SubscriptionsInfo,
  type SubscriptionsOptions,
} from "./subscriptions/index.js";
import type { EmuClock, EmuResponse, LedgerEntry, UserFeature } from "./types.js";
import { defaultUsers, UserRegistry } from "./users.js";
import { UserSimulation } from "./usersim.js";
import { createV10World } from "./wiring.js";

export type { FaultRule } from "./http/faults.js";
export type { EmuHttpEvent } from "./http/server.js";
export type { ReportingControl, TransferInfo } from "./reporting/index.js";
export type { SeedFile, SeedStore } from "./seed.js";
export { parseSeedFile } from "./seed.js";
export type { EmulatorStats } from "./stats.js";
export { EmulatorInputError };

export interface EmulatorOptions {
  /** TCP port (default 0: a free port). */
  port?: number;
  /** Listen address (default "127.0.0.1"). */
  host?: string;
  /**
   * `pollDelayInMs` of payments and check-in, ms (default 1000; min 10). Below 1000 is a test affordance:
   * the real service never goes below 1000 (pos-v10 §10).
   */
  pollDelayMs?: number;
  /** From the user's accept to Reserved, emulator ms (pos-v10 §19; default one poll interval). */
  acceptToReservedMs?: number;
  /** Inactivity before CancelledByService, emulator ms (default 300_000). */
  inactivityMs?: number;
  /** Largest accepted request body, bytes (default 64 KiB); larger → 413. */
  bodyLimitBytes?: number;
  /** Extra integrators, merchants, stores, users and callback aliases. */
  seed?: SeedFile;
  /** Virtual clock start, ms since the epoch (default Date.now()). */
  startTime?: number;
  /** Extra accept delay of `slowToAccept` users, emulator ms (default 5000). */
  slowAcceptMs?: number;
  /** An unpaired check-in lapses after this, emulator ms (default 120_000, pos-v10 §10). */
  checkinTimeoutMs?: number;
  /** `pollDelayInMs` of refunds and the time from refund creation to Reserved, ms (default 100). */
  refundPollDelayMs?: number;
  /** Retention of finished payments and idempotency keys, emulator ms (default 25 h; min 24 h, pos-v10 §9). */
  retentionMs?: number;
  /** Real-time waits before the callback retries, ms (default [1000, 2000, 4000], pos-v10 §16). */
  callbackRetryDelaysMs?: number[];
  /** Real-time source (default Date.now); a constant function freezes emulator time between advances. */
  timeSource?: () => number;
  /**
   * Whether a clock advance runs every scheduled rule at its own time within the jump (default true). False
   * runs the rules only at the advance's end (test affordance: a reference run living through time in small
   * steps, as the clock-jump test compares).
   */
  scheduledStops?: boolean;
  /** Subscriptions (seed 000): callback trust, loopback ports, the deprecated interface's TLS listener. */
  subscriptions?: SubscriptionsOptions;
  /** CA certificate (PEM) the HTTPS callbacks (invoices, online payments) trust, e.g. a test receiver's. */
  callbackCa?: string;
  /** Lets HTTPS callbacks use any port of a loopback host (default false: ports 443 and 80 only). */
  callbackAllowLoopbackPorts?: boolean;
}

export interface EmulatorInfo {
  port: number;
  admin: string;
  v10: {
    baseUrl: string;
    tokenUrl: string;
    clientId: string;
    clientSecret: string;
    merchantVat: string;
    storeId: string;
    merchantBrandId: string;
    merchantLocationId: string;
  };
  legacy: { baseUrl: string; merchantId: string; locationId: string; apiKey: string; merchantKey: string };
  users: { phone: string; features: UserFeature[] }[];
  subscriptions: SubscriptionsInfo;
  invoices: InvoicesInfo & { baseUrl: string };
  online: OnlineInfo & { baseUrl: string };
  /** Transaction reporting (seed 002): OpenID Connect client = the integrator, merchant = the seeded one. */
  reporting: {
    baseUrl: string;
    discoveryUrl: string;
    clientId: string;
    clientSecret: string;
    merchantId: string;
    paymentPointId: string;
  };
}

export interface Emulator {
  readonly info: EmulatorInfo;
  readonly clock: EmuClock;
  /** Every money movement so far (both interfaces). */
  ledger(): readonly LedgerEntry[];
  /**
   * Records a money movement in the one ledger as an interface does (tests, benchmarks); without `currency`
   * the merchant's own (its VAT country's; the seeded merchant's DKK when `merchant` is absent).
   */
  recordLedger(entry: Omit<LedgerEntry, "seq" | "at" | "currency"> & { currency?: string }): LedgerEntry;
  /** Transaction reporting: transfers, cut-offs, invoiced fees. */
  reporting: ReportingControl;
  /** Direct model access for in-process tests and the demo's simulated customers. */
  userSimulation: {
    checkin(beaconId: string, phone: string): EmuResponse;
    accept(beaconId: string, phone: string): EmuResponse;
    reject(beaconId: string): EmuResponse;
  };
  faults: { add(rule: FaultRule): void; clear(): void };
  /** Registers a notification-service alias → URL (pos-v10 §16). */
  registerCallback(alias: string, url: string): void;
  stats(): EmulatorStats;
  /**
   * Subscribes to the HTTP exchanges (each request as it arrives, each answer once sent, timestamped with
   * `performance.now()`): the edge latencies of a unit measured from outside it (scripts/bench-board.ts).
   * Returns the unsubscribe function.
   */
  onHttp(listener: (event: EmuHttpEvent) => void): () => void;
  close(): Promise<void>;
}

function bounded(name: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min)
    throw new EmulatorInputError(`${name} must be an integer >= ${min}`);
  return v;
}

/** The emulator's timing settings, checked (EmulatorInputError naming the option at fault). */
function emulatorConfig(options: EmulatorOptions) {
  const pollDelayMs = bounded("pollDelayMs", options.pollDelayMs, 1000, 10);
  const refundPollDelayMs = bounded("refundPollDelayMs", options.refundPollDelayMs, 100, 0);
  const retentionMs = bounded("retentionMs", options.retentionMs, 25 * 3600_000, 24 * 3600_000);
  return {
    pollDelayMs,
    refundPollDelayMs,
    refundReserveMs: refundPollDelayMs,
    acceptToReservedMs: bounded("acceptToReservedMs", options.acceptToReservedMs, pollDelayMs, 0),
    slowAcceptMs: bounded("slowAcceptMs", options.slowAcceptMs, 5000, 0),
    inactivityMs: bounded("inactivityMs", options.inactivityMs, 300_000, 1),
    checkinTimeoutMs: bounded("checkinTimeoutMs", options.checkinTimeoutMs, 120_000, 1),
    retentionMs,
  };
}

type EmulatorConfig = ReturnType<typeof emulatorConfig>;

/** The shared pieces: the virtual clock, the ledger, stats, users, callbacks and the integrator credentials. */
function createCore(options: EmulatorOptions) {
  const seed = options.seed ?? {};
  const clock = createVirtualClock({
    startTime: options.startTime ?? Date.now(),
    timeSource: options.timeSource,
    ...(options.scheduledStops === undefined ? {} : { scheduledStops: options.scheduledStops }),
  });
  const ledger = createLedger(clock);
  const stats = new StatsRecorder();
  const users = new UserRegistry([...defaultUsers(), ...(seed.users ?? [])]);
  const callbacks = new CallbackNotifier(stats, { retryDelaysMs: options.callbackRetryDelaysMs });
  for (const c of seed.callbacks ?? []) callbacks.register(c.alias, c.url);
  const clientId = `integrator-${randomSecret(6)}`;
  const clientSecret = randomSecret();
  const integrators = new Map<string, string>([[clientId, clientSecret]]);
  for (const i of seed.integrators ?? []) integrators.set(i.clientId, i.clientSecret);
  return { seed, clock, ledger, stats, users, callbacks, clientId, clientSecret, integrators };
}

type EmulatorCore = ReturnType<typeof createCore>;

/** The point-of-sale interfaces: V10 with its store, the older interface, and the simulated app users. */
function createPointOfSale(core: EmulatorCore, config: EmulatorConfig) {
  const { seed, clock, ledger, stats, users, callbacks, integrators } = core;
  const mainStore = makeStore(DEFAULT_MERCHANT.vat, randomUUID(), {
    merchantBrandId: DEFAULT_MERCHANT.merchantBrandId,
    merchantLocationId: DEFAULT_MERCHANT.merchantLocationId,
    storeName: "Emulator Store",
  });
  const v10 = createV10World({
    config,
    clock,
    ledger,
    stats,
    integrators,
    callbacks,
    stores: [mainStore],
    merchants: seed.merchants ?? [],
  });
  const legacySeed = {
    merchantId: DEFAULT_MERCHANT.merchantBrandId,
    locationId: DEFAULT_MERCHANT.merchantLocationId,
    apiKey: randomUUID(),
    merchantKey: randomSecret(32),
    locationName: "Emulator Store",
  };
  const legacy = createLegacyInterface({ clock, ledger, findUser: (p) => users.find(p) }, legacySeed);
  const usersim = new UserSimulation(
    [
      { target: v10.checkinTarget, modelsUserFeatures: true },
      { target: legacy, modelsUserFeatures: false },
    ],
    { findUser: (p) => users.find(p), tokens: v10.tokens, clock, slowAcceptMs: config.slowAcceptMs },
  );
  return { mainStore, v10, legacySeed, legacy, usersim };
}

type PointOfSale = ReturnType<typeof createPointOfSale>;

/** Subscriptions, invoices, online payments and transaction reporting. */
function createOtherInterfaces(options: EmulatorOptions, core: EmulatorCore, pos: PointOfSale) {
  const { seed, clock, ledger, users, integrators } = core;
  const { mainStore, v10, legacySeed } = pos;
  const subs = createSubscriptions({
    clock,
    ledger,
    findUser: (p) => users.find(p),
    options: options.subscriptions,
    seed: seed.subscriptions,
    merchantVat: DEFAULT_MERCHANT.vat,
  });
  const httpsCallbacks = new HttpsCallbackClient({
    ...(options.callbackCa === undefined ? {} : { ca: options.callbackCa }),
    allowLoopbackPorts: options.callbackAllowLoopbackPorts === true,
  });
  const invoices = createInvoicesInterface({
    clock,
    ledger,
    findUser: (p) => users.find(p),
    https: httpsCallbacks,
    merchantVat: DEFAULT_MERCHANT.vat,
  });
  const online = createOnlineInterface({
    clock,
    ledger,
    findUser: (p) => users.find(p),
    https: httpsCallbacks,
  });
  const reporting = createReporting({
    clock,
    ledger,
    clients: integrators,
    defaultMerchantId: DEFAULT_MERCHANT.vat,
    points: [...v10.deps.world.stores.values()].map((s) => ({
      paymentPointId: s.storeId,
      paymentPointName: s.storeName,
      merchantId: s.vat,
      merchantName: s === mainStore ? "Emulator Merchant A/S" : undefined,
      aliases:
        s === mainStore
          ? [{ source: "legacy", merchant: legacySeed.merchantId, point: legacySeed.locationId }]
          : [],
    })),
  });
  return { subs, httpsCallbacks, invoices, online, reporting };
}

type OtherInterfaces = ReturnType<typeof createOtherInterfaces>;

/** What a test or `vendd emulator --json` needs to talk to the emulator at `origin`. */
function emulatorInfo(
  origin: string,
  port: number,
  core: EmulatorCore,
  pos: PointOfSale,
  more: OtherInterfaces,
): EmulatorInfo {
  const { clientId, clientSecret, users } = core;
  const { mainStore, legacySeed } = pos;
  const { subs, invoices, online } = more;
  return {
    port,
    admin: `${origin}/_admin`,
    v10: {
      baseUrl: origin,
      tokenUrl: `${origin}/integrator-authentication/connect/token`,
      clientId,
      clientSecret,
      merchantVat: DEFAULT_MERCHANT.vat,
      storeId: mainStore.storeId,
      merchantBrandId: DEFAULT_MERCHANT.merchantBrandId,
      merchantLocationId: DEFAULT_MERCHANT.merchantLocationId,
    },
    legacy: {
      baseUrl: origin,
      merchantId: legacySeed.merchantId,
      locationId: legacySeed.locationId,
      apiKey: legacySeed.apiKey,
      merchantKey: legacySeed.merchantKey,
    },
    users: users.list().map((u) => ({ phone: u.phone, features: [...u.features] })),
    subscriptions: subs.info(origin),
    invoices: { baseUrl: origin, ...invoices.info },
    online: { baseUrl: origin, ...online.info },
    reporting: {
      baseUrl: `${origin}/transaction-reporting/api/merchant`,
      discoveryUrl: `${origin}/merchant-authentication-openidconnect/.well-known/openid-configuration`,
      clientId,
      clientSecret,
      merchantId: DEFAULT_MERCHANT.vat,
      paymentPointId: mainStore.storeId,
    },
  };
}

/** Starts the payment-service emulator (V10 and the older interface) on a loopback HTTP port. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? "127.0.0.1";
  const config = emulatorConfig(options);
  const core = createCore(options);
  const { clock, ledger, stats, users, callbacks } = core;
  const pos = createPointOfSale(core, config);
  const { v10, legacy, usersim } = pos;
  const more = createOtherInterfaces(options, core, pos);
  const { subs, httpsCallbacks, invoices, online, reporting } = more;
  const faults = new FaultSchedule();
  const admin = createAdminHandler({ clock, ledger, faults, stats, users, callbacks });
  const httpListeners = new Set<(event: EmuHttpEvent) => void>();
  const server = await startHttpServer(
    {
      handlers: [
        ...subs.handlers,
        v10.handler,
        legacy,
        invoices.handler,
        online.handler,
        usersim,
        v10.tokens,
        reporting.handler,
        admin,
      ],
      faults,
      stats,
      bodyLimitBytes: bounded("bodyLimitBytes", options.bodyLimitBytes, 64 * 1024, 1),
      observe: (event) => {
        for (const l of httpListeners) l(event);
      },
    },
    host,
    options.port ?? 0,
  );
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`;
  await subs.start(host).catch(async (e: unknown) => {
    await server.close();
    throw e;
  });
  const info = emulatorInfo(origin, server.port, core, pos, more);
  return {
    info,
    clock,
    ledger: () => ledger.entries(),
    recordLedger: (entry) =>
      ledger.record({
        ...entry,
        currency: entry.currency ?? currencyOfMerchant(entry.merchant ?? DEFAULT_MERCHANT.vat),
      }),
    reporting: reporting.control,
    userSimulation: {
      checkin: (beaconId, phone) => usersim.checkin(beaconId, phone),
      accept: (beaconId, phone) => usersim.accept(beaconId, phone),
      reject: (beaconId) => usersim.reject(beaconId),
    },
    faults: { add: (rule) => faults.add(rule), clear: () => faults.clear() },
    registerCallback: (alias, url) => callbacks.register(alias, url),
    stats: () => stats.snapshot(),
    onHttp(listener) {
      httpListeners.add(listener);
      return () => httpListeners.delete(listener);
    },
    async close() {
      usersim.close();
      legacy.close();
      v10.close();
      clock.stop();
      await Promise.all([invoices.close(), online.close()]);
      await Promise.all([server.close(), callbacks.close(), subs.close(), httpsCallbacks.close()]);
    },
  };
}
