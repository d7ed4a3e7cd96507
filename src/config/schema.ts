/**
 * The one configuration schema (style anchors, habit 5): it gives the TypeScript type (`VenddConfig`), the
 * defaults and the runtime check. Every object is strict, so an unknown or misspelt key is an error. The
 * reference of every key is config/README.md; config/example.yaml shows them all.
 */
import * as z from "zod";
import { parseAmount } from "../core/money.js";
import { ALWAYS, crossCheck, intIn, isRecord, nonEmpty, serviceText } from "./rules.js";
import { consoleSchema } from "./schema-console.js";
import { bleSchema, gpioSchema, nfcSchema, pulseIssues, pulseSchema } from "./schema-devices.js";
import { dexSchema } from "./schema-dex.js";
import { displayIssues, displaySchema } from "./schema-display.js";
import { entitlementKeyIssues, entitlementsSchema } from "./schema-entitlements.js";
import { fleetSchema } from "./schema-fleet.js";
import { metricsSchema } from "./schema-metrics.js";
import { paymentSchema } from "./schema-payment.js";
import { amountSchema, CURRENCY_DECIMALS, DEFAULT_MAX_PRICE, maxPriceIssues } from "./schema-price.js";
import { updatesSchema } from "./schema-updates.js";

export { displaySchema } from "./schema-display.js";
export { BEACON_TYPES, PAYMENT_DRIVERS, type PaymentDriverName } from "./schema-payment.js";
export { CURRENCY_DECIMALS } from "./schema-price.js";

const unitSchema = z.strictObject({
  /** Used in order ids, so short and plain: 1-12 of `[A-Za-z0-9-]`. */
  id: z.string().regex(/^[A-Za-z0-9-]{1,12}$/, "must be 1-12 characters of A-Z, a-z, 0-9 and -"),
  /** Shown in the app after check-in (PoS name: ≤ 36 valid characters, pos-v10.md §14). */
  name: serviceText(36),
});

const journalSchema = z
  .strictObject({
    path: nonEmpty(4096).default("/var/lib/vendd/journal.db"),
    /** Days a finished session stays in the journal. */
    retentionDays: intIn(7, 36_500).default(90),
    /** SQLite `journal_size_limit` in bytes (reliability.md §1.3: 4-16 MiB). */
    sizeLimitBytes: intIn(0, 1_073_741_824).default(8_388_608),
  })
  .prefault({});

/** Serial ports, prefer the stable `/dev/serial/by-id/...` names. */
export const vmcSchema = z
  .strictObject({
    driver: z.enum(["sim", "mdb-adapter", "pulse"]).default("sim"),
    device: nonEmpty(4096).nullable().default(null),
    baudRate: intIn(1200, 4_000_000).default(115_200),
    commandTimeoutMs: intIn(10, 60_000).default(2000),
    linkTimeoutMs: intIn(100, 600_000).default(5000),
    /**
     * Minimum ms between two adapter reads that follow data (bounds the read rate under the VMC's `r,ACK`
     * polls at up to this much latency per line); 0 disables pacing. The memory bench sets 0 to run
     * 10,000 vends in minutes.
     */
    readPacingMs: intIn(0, 1000).default(50),
    /** Decimal places Y of the MDB price scale (vending-mdb.md: value = P × X × 10^-Y). */
    decimals: intIn(0, 4).default(2),
  })
  .superRefine(
    crossCheck((v) =>
      v.driver === "mdb-adapter" && (v.device === null || v.device === undefined)
        ? [
            {
              path: ["device"],
              message: "required when vmc.driver is mdb-adapter (the adapter's serial port)",
            },
          ]
        : [],
    ),
    ALWAYS,
  )
  .prefault({});

const engineSchema = z
  .strictObject({
    flow: z.enum(["selection", "checkin"]).default("selection"),
    /** Check-in first: the amount reserved per session; vends in a session stay within it. */
    sessionMax: amountSchema("20.00").default("20.00"),
    /** Selection first: the highest VMC price paid for; above it a vend is denied (schema-price.ts). */
    maxPrice: amountSchema(DEFAULT_MAX_PRICE).default(DEFAULT_MAX_PRICE),
    /** ms the customer has to pay in. */
    paymentTimeoutMs: intIn(1000, 600_000).default(60_000),
    /** ms the VMC has to report the vend outcome in. */
    vendTimeoutMs: intIn(1000, 600_000).default(60_000),
    /** What to do when the vend outcome stays unknown (MDB §7.4.7 default: capture; reliability.md §2.4). */
    unknownOutcome: z.enum(["capture", "cancel"]).default("capture"),
  })
  .transform((e) => ({
    ...e,
    sessionMaxMinor: parseAmount(e.sessionMax, CURRENCY_DECIMALS),
    maxPriceMinor: parseAmount(e.maxPrice, CURRENCY_DECIMALS),
  }))
  .prefault({});

/** Names of the board profiles in boards/ (`boards/<name>.json`). */
export const BOARD_NAMES = [
  "sim",
  "pi-hat",
  "pi-usb",
  "pi-pulse",
  "sim-pulse",
  "pi-spi-panel",
  "pi-oled",
] as const;
export type BoardName = (typeof BOARD_NAMES)[number];

/** The root schema. Parse with `configSchema.safeParse(raw, { error: describeIssue })` (see load.ts). */
export const configSchema = z
  .strictObject({
    unit: unitSchema,
    /** Hardware profile: its values are merged under this config before parsing (src/config/boards.ts). */
    board: z.enum(BOARD_NAMES).default("sim"),
    currency: z.enum(["DKK", "EUR"]).default("DKK"),
    journal: journalSchema,
    payment: paymentSchema,
    vmc: vmcSchema,
    display: displaySchema,
    ble: bleSchema,
    nfc: nfcSchema,
    gpio: gpioSchema,
    pulse: pulseSchema,
    engine: engineSchema,
    logging: z
      .strictObject({
        level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
      })
      .prefault({}),
    /** The technician console and its control socket (schema-console.ts). */
    console: consoleSchema,
    /** Where the secrets file is; `--secrets` and VENDD_SECRETS_FILE take precedence. */
    secrets: z.strictObject({ file: nonEmpty(4096).nullable().default(null) }).prefault({}),
    /** Signed bundles: trusted keys, inbox, pull URL, health gate (src/config/schema-updates.ts). */
    updates: updatesSchema,
    /** The fleet link (src/config/schema-fleet.ts); absent = none. */
    fleet: fleetSchema,
    /** Member plan vends: the entitlement key and list (src/config/schema-entitlements.ts); null = none. */
    entitlements: entitlementsSchema,
    /** The DEX audit reader on the machine's DEX jack (src/config/schema-dex.ts, docs/dex.md). */
    dex: dexSchema,
    /** The unit's metrics for node_exporter's textfile collector (src/config/schema-metrics.ts). */
    metrics: metricsSchema,
  })
  .superRefine(
    crossCheck((root) => [
      ...pulseIssues(isRecord(root.vmc) ? root.vmc.driver : undefined, root.pulse),
      ...maxPriceIssues(root),
      ...entitlementKeyIssues(root),
      ...displayIssues(root.display, beaconIdOf(root.payment)),
    ]),
    ALWAYS,
  );

/** The beaconId the unit's check-in link carries (like seams.ts, configuredBeaconId), unparsed. */
function beaconIdOf(payment: unknown): unknown {
  if (!isRecord(payment)) return undefined;
  const section = payment.driver === "legacy" ? payment.legacy : payment.v10;
  if (!isRecord(section)) return undefined;
  return payment.driver === "legacy" ? section.posUnitId : section.beaconId;
}

/**
 * The parsed configuration with every default applied. `engine.sessionMax` and `engine.maxPrice` keep the
 * decimal string as written; `engine.sessionMaxMinor` and `engine.maxPriceMinor` are the same amounts in
 * minor units (integers, > 0) and are what code uses.
 */
export type VenddConfig = z.output<typeof configSchema>;

/** What a config file (or `buildConfig`) may contain: defaulted keys are optional. */
export type VenddConfigInput = z.input<typeof configSchema>;

/** The config as a file would hold it: derived fields removed, so it validates again unchanged. */
export function toConfigInput(config: VenddConfig): VenddConfigInput {
  const { sessionMaxMinor: _session, maxPriceMinor: _price, ...engine } = config.engine;
  return { ...config, engine };
}
