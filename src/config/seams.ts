/**
 * The one mapping from the validated configuration (board profile already merged, src/config/load.ts) and
 * the secrets to the options of every seam: payment, vmc, display, gpio, ble, nfc, engine, journal. Each
 * factory takes these options plus its collaborators, `create<Seam>(options, deps)`, and never sees the
 * config; so the daemon, the demo, `vendd doctor`, `vendd nfc` and the benchmarks open the same devices
 * the same way, and a new config key is mapped in one place.
 *
 * Only this module of src/config looks at the seams, and only at their option types (`import type`): the
 * layer rule (README, Architecture; test/structure/layers.test.ts).
 */
import type { BeaconOptions } from "../../drivers/ble/factory.js";
import type { DisplayOptions } from "../../drivers/display/factory.js";
import type { GpioOptions } from "../../drivers/gpio/factory.js";
import type { NfcOptions } from "../../drivers/nfc/factory.js";
import type { VmcOptions } from "../../drivers/vmc/factory.js";
import { incompleteOptions } from "../core/seams.js";
import type { EngineOptions } from "../engine/options.js";
import type { JournalOptions } from "../journal/factory.js";
import type { PaymentOptions } from "../payment/factory.js";
import { PAYMENT_DRIVERS, type VenddConfig } from "./schema.js";
import { pulseAmountMinor } from "./schema-devices.js";
import { DISPLAY_KIND_NAMES } from "./schema-display.js";
import { CURRENCY_DECIMALS } from "./schema-price.js";
import type { Secrets } from "./secrets.js";

/** The options of every seam of one unit. */
export interface SeamOptions {
  payment: PaymentOptions;
  vmc: VmcOptions;
  display: DisplayOptions;
  gpio: GpioOptions;
  ble: BeaconOptions;
  nfc: NfcOptions;
  engine: EngineOptions;
  journal: JournalOptions;
}

/**
 * Every seam's options at once (what `vendd run` starts with). Tools that need one seam call its own
 * function below, so `vendd nfc write-tag` runs without payment secrets.
 * @throws SeamConfigError when a section the schema let through cannot give its seam (payment secrets
 *   missing because the config was loaded with `requireSecrets: false`).
 */
export function seamOptions(config: VenddConfig, secrets: Secrets): SeamOptions {
  return {
    payment: paymentOptions(config, secrets),
    vmc: vmcOptions(config),
    display: displayOptions(config),
    gpio: gpioOptions(config),
    ble: beaconOptions(config),
    nfc: nfcOptions(config),
    engine: engineOptions(config),
    journal: journalOptions(config),
  };
}

/**
 * The payment driver named by `payment.driver`, with its section and its secrets.
 * @throws SeamConfigError when the section or a secret is missing (names the key, never a value).
 */
export function paymentOptions(config: VenddConfig, secrets: Secrets): PaymentOptions {
  const p = config.payment;
  if (p.driver === "legacy") {
    const legacy = p.legacy;
    const keys = secrets.legacy;
    if (legacy === undefined || keys === undefined) {
      throw incompleteOptions("payment", "legacy", PAYMENT_DRIVERS, "payment.legacy and secrets.legacy");
    }
    return {
      kind: "legacy",
      baseUrl: legacy.baseUrl,
      apiVersion: legacy.apiVersion,
      merchantId: legacy.merchantId,
      locationId: legacy.locationId,
      posId: legacy.posId,
      posUnitId: legacy.posUnitId,
      posName: config.unit.name,
      bulkRef: legacy.bulkRef,
      captureType: legacy.captureType,
      apiKey: keys.apiKey,
      merchantKey: keys.merchantKey,
      requestTimeoutMs: legacy.requestTimeoutMs,
    };
  }
  const v10 = p.v10;
  const clientSecret = secrets.v10?.clientSecret;
  if (v10 === undefined || clientSecret === undefined) {
    throw incompleteOptions("payment", "v10", PAYMENT_DRIVERS, "payment.v10 and secrets.v10.clientSecret");
  }
  return {
    kind: "v10",
    baseUrl: v10.baseUrl,
    tokenUrl: v10.tokenUrl,
    clientId: v10.clientId,
    clientSecret,
    merchantVat: v10.merchantVat,
    clientSystemName: v10.clientSystemName,
    clientSystemVersion: v10.clientSystemVersion,
    storeId: v10.storeId,
    merchantBrandId: v10.merchantBrandId,
    merchantLocationId: v10.merchantLocationId,
    merchantPosId: v10.merchantPosId ?? config.unit.id,
    posName: config.unit.name,
    beaconId: v10.beaconId,
    supportedBeaconTypes: [...v10.supportedBeaconTypes],
    // A self-service unit pairs a check-in only with a payment that exists (pos-v10 §10), so a customer
    // who checked in and walked away is never paired with the next customer's payment.
    requirePaymentBeforeCheckin: config.engine.flow === "selection" || v10.checkin === "idlePayment",
    currency: config.currency,
    timeouts: { ...v10.timeouts },
    retries: { ...v10.retries },
  };
}

const VMC_KINDS = ["sim", "mdb-adapter", "pulse"];

/**
 * The vend controller named by `vmc.driver`; `pulse` takes its pins, timing and price from the `pulse`
 * section (amounts are decimal strings there and minor units here) and its port from `gpio`.
 * @throws SeamConfigError when `vmc.device` (mdb-adapter) or `pulse.price` / `pulse.pins.output` (pulse)
 *   is null; the schema reports both first, so this is a programming error.
 */
export function vmcOptions(config: VenddConfig): VmcOptions {
  const vmc = config.vmc;
  switch (vmc.driver) {
    case "sim":
      return { kind: "sim" };
    case "mdb-adapter":
      if (vmc.device === null) throw incompleteOptions("vmc", "mdb-adapter", VMC_KINDS, "vmc.device");
      return {
        kind: "mdb-adapter",
        path: vmc.device,
        baudRate: vmc.baudRate,
        currencyCode: config.currency,
        // The adapter line carries amounts already scaled to currency units (vending-mdb §2), so they are
        // read in the currency's decimals; vmc.decimals (the MDB Y) only bounds engine.maxPrice.
        decimals: CURRENCY_DECIMALS,
        commandTimeoutMs: vmc.commandTimeoutMs,
        linkTimeoutMs: vmc.linkTimeoutMs,
        readPacingMs: vmc.readPacingMs,
      };
    case "pulse": {
      const p = config.pulse;
      if (p.price === null || p.pins.output === null) {
        throw incompleteOptions("vmc", "pulse", VMC_KINDS, "pulse.price and pulse.pins.output");
      }
      return {
        kind: "pulse",
        port: gpioOptions(config),
        pulsePin: p.pins.output,
        timing: { widthMs: p.widthMs, gapMs: p.gapMs, activeHigh: p.activeHigh },
        price: pulseAmountMinor(p.price),
        valuePerPulse: pulseAmountMinor(p.valuePerPulse),
        inhibitPin: p.pins.inhibit,
        inhibitActiveHigh: p.inhibitActiveHigh,
        startPin: p.pins.start,
        requestOnSession: p.requestOnSession,
      };
    }
  }
}

/** The check-in display of the `display` section. */
export function displayOptions(config: VenddConfig): DisplayOptions {
  const d = config.display;
  switch (d.kind) {
    case "terminal":
      return { kind: "terminal", devicePath: d.device };
    case "framebuffer":
      if (d.device === null)
        throw incompleteOptions("display", "framebuffer", DISPLAY_KIND_NAMES, "display.device");
      return {
        kind: "framebuffer",
        device: d.device,
        sysfs: d.sysfs,
        width: d.width,
        height: d.height,
        bitsPerPixel: d.bitsPerPixel,
        stride: d.stride,
        decimals: CURRENCY_DECIMALS,
      };
    case "ssd1306":
    case "sh1106":
      return { kind: d.kind, bus: d.i2c.bus, address: d.i2c.address, decimals: CURRENCY_DECIMALS };
    default:
      return { kind: d.kind };
  }
}

/** The GPIO port of the `gpio` section (the panel's pins and the pulse output share it). */
export function gpioOptions(config: VenddConfig): GpioOptions {
  const g = config.gpio;
  if (g.kind === "sim") return { kind: "sim" };
  return {
    kind: "johnny-five",
    io: g.io.plugin === "pi-io" ? { kind: "pi-io" } : { kind: "firmata", port: g.io.port },
  };
}

/** The BLE beacon of the `ble` section. */
export function beaconOptions(config: VenddConfig): BeaconOptions {
  return { kind: config.ble.kind, companyId: config.ble.companyId, serviceUuid: config.ble.serviceUuid };
}

/** The NFC station of the `nfc` section (badge hashes only, never UIDs). */
export function nfcOptions(config: VenddConfig): NfcOptions {
  return {
    kind: config.nfc.kind,
    badges: config.nfc.badges,
    ...(config.nfc.simFeed === null ? {} : { simFeed: config.nfc.simFeed }),
  };
}

/** The engine of the `engine` section, with what the payment interface decides about it. */
export function engineOptions(config: VenddConfig): EngineOptions {
  const legacy = config.payment.driver === "legacy" ? config.payment.legacy : undefined;
  return {
    flow: config.engine.flow,
    // The older interface has no check-in query: it keeps an idle reservation instead (pos-legacy §9).
    checkinMode: config.payment.driver === "v10" ? (config.payment.v10?.checkin ?? "poll") : "idlePayment",
    sessionMax: config.engine.sessionMaxMinor,
    maxPrice: config.engine.maxPriceMinor,
    currency: config.currency,
    scheme: config.display.scheme,
    paymentTimeoutMs: config.engine.paymentTimeoutMs,
    vendTimeoutMs: config.engine.vendTimeoutMs,
    unknownOutcome: config.engine.unknownOutcome,
    paymentMode: legacy?.mode ?? "reservation",
    captureType: legacy?.captureType ?? "full",
  };
}

/** The journal of the `journal` section; its order ids start with the unit's id. */
export function journalOptions(config: VenddConfig): JournalOptions {
  return {
    path: config.journal.path,
    unitId: config.unit.id,
    sizeLimitBytes: config.journal.sizeLimitBytes,
    currency: config.currency,
    // The fleet outbox: only with a fleet link; the journal does not hold the currency of its amounts.
    ...(config.fleet === undefined ? {} : { outbox: { currency: config.currency } }),
  };
}

/** The beaconId the unit shows: the configured V10 beaconId or the older interface's PoSUnitId. */
export function configuredBeaconId(config: VenddConfig): string | null {
  if (config.payment.driver === "legacy") return config.payment.legacy?.posUnitId ?? null;
  return config.payment.v10?.beaconId ?? null;
}
