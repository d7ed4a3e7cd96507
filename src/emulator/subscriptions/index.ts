import { randomBytes, randomUUID } from "node:crypto";
import { EmulatorInputError } from "../errors.js";
import type { EmuClock, InterfaceHandler, Ledger, SimUser } from "../types.js";
import { VAT } from "../v10/validate.js";
import { SubsDelivery } from "./delivery.js";
import { SubsRoutes } from "./handler.js";
import type { SubsMerchant } from "./model.js";
import { SubsSimulation } from "./sim.js";
import { SubsState } from "./state.js";
import { nextDue, tick } from "./tick.js";
import { type DeprecatedTlsOptions, startDeprecatedListener } from "./tls.js";
import { SUBS_TOKEN_PATH } from "./token.js";

export type { DeprecatedTlsOptions } from "./tls.js";

/** Options of the subscriptions interface (EmulatorOptions.subscriptions). */
export interface SubscriptionsOptions {
  /** PEM certificate(s) trusted for callback TLS, besides the system store (a test's self-signed receiver). */
  callbackCa?: string | string[];
  /**
   * Lets callbacks reach loopback hosts (127.0.0.0/8, ::1, localhost) on any port, not only 80/443 (a test
   * receiver on port 0). Off by default: the service's rule (https, ports 80 and 443) holds.
   */
  callbackAllowLoopbackPorts?: boolean;
  /** Starts the deprecated interface's mutual-TLS listener (absent: not started). */
  deprecatedTls?: DeprecatedTlsOptions;
}

/** A merchant to seed (`seed.subscriptions.merchants`). */
export interface SubsSeedMerchant {
  merchantId?: string;
  /** VAT number (transaction reporting's merchant); default: the emulator's merchant VAT. */
  vat?: string;
  clientId: string;
  clientSecret: string;
  gatewayClientId?: string;
  gatewayClientSecret?: string;
  providers?: { providerId?: string; name?: string; status?: "Enabled" | "Pending" }[];
}

export interface SubscriptionsInfo {
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  merchantId: string;
  providerId: string;
  /** Deprecated interface: gateway credentials, and its TLS base URL when the listener runs. */
  deprecated: { baseUrl: string | null; gatewayClientId: string; gatewayClientSecret: string };
}

function secret(): string {
  return randomBytes(18).toString("base64url");
}

function text(v: unknown, what: string): string {
  if (typeof v !== "string" || v === "") throw new EmulatorInputError(`${what} is invalid`);
  return v;
}

/** Reads `seed.subscriptions` ({"merchants":[…]}) from untrusted JSON. */
export function parseSubscriptionsSeed(value: unknown): SubsSeedMerchant[] {
  if (value === undefined) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new EmulatorInputError("seed.subscriptions must be an object");
  const list = (value as Record<string, unknown>).merchants ?? [];
  if (!Array.isArray(list)) throw new EmulatorInputError("seed.subscriptions.merchants must be a list");
  return list.map((x, i) => {
    const at = `seed.subscriptions.merchants[${i}]`;
    if (typeof x !== "object" || x === null) throw new EmulatorInputError(`${at} must be an object`);
    const o = x as Record<string, unknown>;
    const m: SubsSeedMerchant = {
      clientId: text(o.clientId, `${at}.clientId`),
      clientSecret: text(o.clientSecret, `${at}.clientSecret`),
    };
    if (o.merchantId !== undefined) m.merchantId = text(o.merchantId, `${at}.merchantId`);
    if (o.vat !== undefined) {
      if (typeof o.vat !== "string" || !VAT.test(o.vat))
        throw new EmulatorInputError(`${at}.vat must be a VAT number (DK or FI and 8 digits)`);
      m.vat = o.vat;
    }
    if (o.gatewayClientId !== undefined) m.gatewayClientId = text(o.gatewayClientId, `${at}.gatewayClientId`);
    if (o.gatewayClientSecret !== undefined)
      m.gatewayClientSecret = text(o.gatewayClientSecret, `${at}.gatewayClientSecret`);
    const ps = o.providers ?? [];
    if (!Array.isArray(ps)) throw new EmulatorInputError(`${at}.providers must be a list`);
    m.providers = ps.map((p, j) => {
      if (typeof p !== "object" || p === null)
        throw new EmulatorInputError(`${at}.providers[${j}] must be an object`);
      const q = p as Record<string, unknown>;
      const out: NonNullable<SubsSeedMerchant["providers"]>[number] = {};
      if (q.providerId !== undefined) out.providerId = text(q.providerId, `${at}.providers[${j}].providerId`);
      if (q.name !== undefined) out.name = text(q.name, `${at}.providers[${j}].name`);
      if (q.status !== undefined) {
        if (q.status !== "Enabled" && q.status !== "Pending")
          throw new EmulatorInputError(`${at}.providers[${j}].status must be Enabled or Pending`);
        out.status = q.status;
      }
      return out;
    });
    return m;
  });
}

export interface SubscriptionsParts {
  handlers: InterfaceHandler[];
  state: SubsState;
  delivery: SubsDelivery;
  /** Info once the origin (plain listener) is known. */
  info(origin: string): SubscriptionsInfo;
  /** Starts the deprecated TLS listener when the options ask for it. */
  start(host: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the subscriptions interface (seed 000): state, callbacks, routes, user simulation and admin, a
 * default merchant with one DK provider, and the seeded ones; its time rules run on every clock tick.
 */
export function createSubscriptions(input: {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
  options?: SubscriptionsOptions;
  seed?: SubsSeedMerchant[];
  /** The emulator's merchant VAT number: the default merchant's, and seeded merchants' without `vat`. */
  merchantVat: string;
}): SubscriptionsParts {
  const options = input.options ?? {};
  let state: SubsState | undefined;
  const delivery = new SubsDelivery(
    () => input.clock.now(),
    { ca: options.callbackCa, allowLoopbackPorts: options.callbackAllowLoopbackPorts ?? false },
    (providerId) => {
      const p = state?.providers.get(providerId);
      return p ? { url: p.callbackUrl, auth: p.auth } : null;
    },
    (providerId) => state?.providers.get(providerId)?.auth ?? { kind: "none" },
  );
  state = new SubsState({ clock: input.clock, ledger: input.ledger, delivery, findUser: input.findUser });
  const s = state;
  const seeds: SubsSeedMerchant[] = [
    {
      clientId: `subs-${secret().slice(0, 8)}`,
      clientSecret: secret(),
      providers: [{ name: "Emulator Subscriptions" }],
    },
    ...(input.seed ?? []),
  ];
  for (const m of seeds) {
    const merchant: SubsMerchant = {
      merchantId: m.merchantId ?? randomUUID(),
      vat: m.vat ?? input.merchantVat,
      clientId: m.clientId,
      clientSecret: m.clientSecret,
      gatewayClientId: m.gatewayClientId ?? randomUUID(),
      gatewayClientSecret: m.gatewayClientSecret ?? secret(),
      deprecatedCallbackUrl: null,
      providers: [],
    };
    for (const p of m.providers?.length ? m.providers : [{}]) {
      const providerId = p.providerId ?? randomUUID();
      s.providers.set(providerId, {
        providerId,
        merchantId: merchant.merchantId,
        name: p.name ?? "Subscriptions",
        status: p.status ?? "Enabled",
        callbackUrl: null,
        auth: { kind: "none" },
      });
      merchant.providers.push(providerId);
    }
    s.merchants.set(merchant.merchantId, merchant);
  }
  const routes = new SubsRoutes(s, () => input.clock.now());
  const sim = new SubsSimulation(s, delivery, input.clock, (phone) => input.findUser(phone) !== undefined);
  const unTick = input.clock.onTick((now) => tick(s, now));
  const unSchedule = input.clock.schedule(() => nextDue(s));
  const unsubscribe = (): void => {
    unTick();
    unSchedule();
  };
  let tls: { port: number; close(): Promise<void> } | null = null;
  let tlsHost = "127.0.0.1";
  const first = s.merchants.values().next().value as SubsMerchant;
  return {
    handlers: [routes, sim],
    state: s,
    delivery,
    info(origin) {
      return {
        baseUrl: origin,
        tokenUrl: `${origin}${SUBS_TOKEN_PATH}`,
        clientId: first.clientId,
        clientSecret: first.clientSecret,
        merchantId: first.merchantId,
        providerId: first.providers[0] ?? "",
        deprecated: {
          baseUrl:
            tls === null ? null : `https://${tlsHost.includes(":") ? `[${tlsHost}]` : tlsHost}:${tls.port}`,
          gatewayClientId: first.gatewayClientId,
          gatewayClientSecret: first.gatewayClientSecret,
        },
      };
    },
    async start(host) {
      if (!options.deprecatedTls) return;
      tlsHost = host;
      tls = await startDeprecatedListener(options.deprecatedTls, host, () => s.merchants.values(), routes);
    },
    async close() {
      unsubscribe();
      await tls?.close();
      await delivery.close();
    },
  };
}
