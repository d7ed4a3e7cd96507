import { randomBytes, randomUUID } from "node:crypto";
import { EmulatorInputError } from "./errors.js";
import { parseSubscriptionsSeed, type SubsSeedMerchant } from "./subscriptions/index.js";
import type { SimUser } from "./types.js";
import { parseUser } from "./users.js";
import type { Store } from "./v10/model.js";
import { BRAND_ID, GUID, LOCATION_ID, VAT } from "./v10/validate.js";

/** A store to create (V10). */
export interface SeedStore {
  /** GUID; generated when absent. */
  storeId?: string;
  merchantBrandId: string;
  merchantLocationId: string;
  storeName?: string;
  /** Default true; false makes initiate/prepare answer 1204. */
  activated?: boolean;
  /** Available refund balance, minor units (default 10,000,000 = 100,000.00). */
  balance?: number;
}

/** Extra data for the emulator: `--seed FILE` (JSON) or `EmulatorOptions.seed`. */
export interface SeedFile {
  /** Extra integrators (token clients) besides the generated one. */
  integrators?: { clientId: string; clientSecret: string }[];
  /** Merchants by VAT with their stores; a VAT already known adds stores to that merchant. */
  merchants?: { vat: string; stores?: SeedStore[] }[];
  users?: SimUser[];
  /** Notification-service aliases and their URLs. */
  callbacks?: { alias: string; url: string }[];
  /** Subscriptions merchants (seed 000): `{"merchants":[{clientId, clientSecret, providers…}]}`. */
  subscriptions?: SubsSeedMerchant[];
}

const DEFAULT_BALANCE = 10_000_000;

function obj(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new EmulatorInputError(`${what} must be an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new EmulatorInputError(`${what} must be a list`);
  return value;
}

function string(value: unknown, what: string, test?: RegExp): string {
  if (typeof value !== "string" || value === "" || (test && !test.test(value)))
    throw new EmulatorInputError(`${what} is invalid`);
  return value;
}

function parseStore(value: unknown, at: string): SeedStore {
  const v = obj(value, at);
  const store: SeedStore = {
    merchantBrandId: string(v.merchantBrandId, `${at}.merchantBrandId`, BRAND_ID),
    merchantLocationId: string(v.merchantLocationId, `${at}.merchantLocationId`, LOCATION_ID),
  };
  if (v.storeId !== undefined) store.storeId = string(v.storeId, `${at}.storeId`, GUID);
  if (v.storeName !== undefined) store.storeName = string(v.storeName, `${at}.storeName`);
  if (v.activated !== undefined) {
    if (typeof v.activated !== "boolean") throw new EmulatorInputError(`${at}.activated must be a boolean`);
    store.activated = v.activated;
  }
  if (v.balance !== undefined) {
    if (typeof v.balance !== "number" || !Number.isSafeInteger(v.balance) || v.balance < 0) {
      throw new EmulatorInputError(`${at}.balance must be an integer number of minor units >= 0`);
    }
    store.balance = v.balance;
  }
  return store;
}

/** Reads a seed file's JSON, refusing anything malformed with the path of the error. */
export function parseSeedFile(value: unknown): SeedFile {
  const v = obj(value, "seed");
  for (const key of Object.keys(v)) {
    if (!["integrators", "merchants", "users", "callbacks", "subscriptions"].includes(key))
      throw new EmulatorInputError(`seed.${key} is not a known key`);
  }
  return {
    integrators: list(v.integrators, "seed.integrators").map((x, i) => {
      const o = obj(x, `seed.integrators[${i}]`);
      return {
        clientId: string(o.clientId, `seed.integrators[${i}].clientId`),
        clientSecret: string(o.clientSecret, `seed.integrators[${i}].clientSecret`),
      };
    }),
    merchants: list(v.merchants, "seed.merchants").map((x, i) => {
      const o = obj(x, `seed.merchants[${i}]`);
      return {
        vat: string(o.vat, `seed.merchants[${i}].vat`, VAT),
        stores: list(o.stores, `seed.merchants[${i}].stores`).map((s, j) =>
          parseStore(s, `seed.merchants[${i}].stores[${j}]`),
        ),
      };
    }),
    users: list(v.users, "seed.users").map(parseUser),
    callbacks: list(v.callbacks, "seed.callbacks").map((x, i) => {
      const o = obj(x, `seed.callbacks[${i}]`);
      return {
        alias: string(o.alias, `seed.callbacks[${i}].alias`),
        url: string(o.url, `seed.callbacks[${i}].url`),
      };
    }),
    subscriptions: parseSubscriptionsSeed(v.subscriptions),
  };
}

/** Builds a V10 store record for a merchant. */
export function makeStore(vat: string, merchantGuid: string, s: SeedStore): Store {
  return {
    storeId: s.storeId ?? randomUUID(),
    vat,
    merchantGuid,
    merchantBrandId: s.merchantBrandId,
    merchantLocationId: s.merchantLocationId,
    storeName: s.storeName ?? `Store ${s.merchantLocationId}`,
    storeStreet: "Emulatorvej 1",
    storeZipCode: "8000",
    storeCity: "Aarhus",
    brandName: `Brand ${s.merchantBrandId}`,
    activated: s.activated ?? true,
    balance: s.balance ?? DEFAULT_BALANCE,
  };
}

/** The seeded test merchant (the emulator's own test data, printed on start by design). */
export const DEFAULT_MERCHANT = {
  vat: "DK12345678",
  merchantBrandId: "POSDK99999",
  merchantLocationId: "88888",
} as const;

/** Random printable test credentials (no characters that need escaping in Basic auth or JSON). */
export function randomSecret(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}
