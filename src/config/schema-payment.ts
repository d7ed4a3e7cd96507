/**
 * The `payment` section: which payment interface the unit uses and its settings. Secrets (client secret,
 * API key, MerchantKey) are NOT here: they come from the secrets file or the environment (reliability.md §5).
 */
import * as z from "zod";
import { ALWAYS, type CrossIssue, crossCheck, httpUrl, intIn, nonEmpty, serviceText } from "./rules.js";

/** Country prefix `DK` or `FI` plus 8 digits, no dash (pos-v10.md §3, §14). */
const VAT = /^(DK|FI)\d{8}$/;
/** `Major.Minor.Build` (pos-v10.md §3). */
const SEMVER = /^\d+\.\d+\.\d+$/;
/** A beaconId is a GUID or exactly 15 digits (seed, beacon rules; pos-v10.md §14). */
const BEACON_ID = /^(?:\d{15}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

export const BEACON_TYPES = ["QR", "NFC", "Bluetooth"] as const;

/** Settings of the V10 REST interface. */
export const v10Schema = z
  .strictObject({
    /** Root of the V10 paths (`{base_url}`; requests go to `{baseUrl}/v10/...`). */
    baseUrl: httpUrl(),
    /** Token endpoint of the client-credentials grant (pos-v10.md §2). */
    tokenUrl: httpUrl(),
    clientId: nonEmpty(256),
    merchantVat: z.string().regex(VAT, "must be DK or FI followed by 8 digits, e.g. DK12345678"),
    clientSystemName: serviceText(36).default("vendd"),
    clientSystemVersion: z.string().regex(SEMVER, "must be Major.Minor.Build, e.g. 1.2.1").default("0.1.0"),
    /** The service's store id; null = look it up by merchantBrandId + merchantLocationId at start-up. */
    storeId: z.guid("must be a GUID").nullable().default(null),
    merchantBrandId: serviceText(36).nullable().default(null),
    merchantLocationId: serviceText(36).nullable().default(null),
    /** Client-chosen PoS id (≤ 36, pos-v10.md §14); null = `unit.id`. */
    merchantPosId: serviceText(36).nullable().default(null),
    /** null = the service generates a GUID at PoS creation and the client reads it back. */
    beaconId: z.string().regex(BEACON_ID, "must be a GUID or exactly 15 digits").nullable().default(null),
    supportedBeaconTypes: z
      .array(z.enum(BEACON_TYPES))
      .min(1, "must list at least one beacon type")
      .refine((types) => new Set(types).size === types.length, "must not list a beacon type twice")
      .default(["QR"]),
    /** `poll`: poll the check-in query while the QR code is shown; `idlePayment`: start a payment at idle. */
    checkin: z.enum(["poll", "idlePayment"]).default("poll"),
    /** Per-request timeouts in ms: 2 s for POST, 0.5 s for GET (pos-v10.md §12). */
    timeouts: z
      .strictObject({ postMs: intIn(100, 60_000).default(2000), getMs: intIn(100, 60_000).default(500) })
      .prefault({}),
    /** Retries of network errors and 5xx: suggested 2, at most 5 (pos-v10.md §12). */
    retries: z
      .strictObject({
        max: intIn(0, 5).default(2),
        baseDelayMs: intIn(0, 60_000).default(100),
        maxDelayMs: intIn(0, 600_000).default(2000),
      })
      .superRefine(
        crossCheck((r) =>
          typeof r.baseDelayMs === "number" &&
          typeof r.maxDelayMs === "number" &&
          r.maxDelayMs < r.baseDelayMs
            ? [{ path: ["maxDelayMs"], message: "must be at least retries.baseDelayMs" }]
            : [],
        ),
        ALWAYS,
      )
      .prefault({}),
  })
  .superRefine(
    crossCheck((v) => {
      // Without a storeId the store is looked up by brand + location (pos-v10.md §12, store lookup).
      if (v.storeId !== null && v.storeId !== undefined) return [];
      const issues: CrossIssue[] = [];
      for (const key of ["merchantBrandId", "merchantLocationId"]) {
        if (v[key] === null || v[key] === undefined) {
          issues.push({
            path: [key],
            message: "required when storeId is null (the store is looked up by it)",
          });
        }
      }
      return issues;
    }),
    ALWAYS,
  );

/** Settings of the older operation-based interface (pos-legacy.md). */
export const legacySchema = z.strictObject({
  /** Requests go to `{baseUrl}/API/{apiVersion}/{Operation}` (pos-legacy.md §1). */
  baseUrl: httpUrl(),
  apiVersion: z
    .string()
    .regex(/^V\d\d$/, "must be V followed by two digits, e.g. V08")
    .default("V08"),
  merchantId: nonEmpty(64),
  locationId: nonEmpty(64),
  /** Case-sensitive, merchant-supplied PoSId, ≤ 256 characters (seed, older-interface identifiers). */
  posId: nonEmpty(256),
  /** The id of the unit's beacon: exactly 15 digits (pos-legacy.md §2). */
  posUnitId: z.string().regex(/^\d{15}$/, "must be exactly 15 digits"),
  /** Required key, may be empty, ≤ 18 characters (seed, BulkRef). */
  bulkRef: z.string().max(18, "must be at most 18 characters long").default(""),
  /** `reservation`: authorize then capture; `payment`: direct payment, refunded when the vend fails. */
  mode: z.enum(["reservation", "payment"]).default("reservation"),
  /** Reservation capture type (seed, ReservationStart CaptureType). */
  captureType: z.enum(["full", "partial"]).default("full"),
  /** Per-request timeout in ms. */
  requestTimeoutMs: intIn(100, 60_000).default(2000),
});

export const PAYMENT_DRIVERS = ["v10", "legacy"] as const;
export type PaymentDriverName = (typeof PAYMENT_DRIVERS)[number];
export const DEFAULT_PAYMENT_DRIVER: PaymentDriverName = "v10";

/** The `payment` section: the selected driver's settings are required, the other's optional. */
export const paymentSchema = z
  .strictObject({
    driver: z.enum(PAYMENT_DRIVERS).default(DEFAULT_PAYMENT_DRIVER),
    v10: v10Schema.optional(),
    legacy: legacySchema.optional(),
  })
  .superRefine(
    crossCheck((p) => {
      const driver = p.driver;
      if ((driver === "v10" || driver === "legacy") && p[driver] === undefined) {
        return [{ path: [driver], message: `required when payment.driver is ${driver}` }];
      }
      return [];
    }),
    ALWAYS,
  );
