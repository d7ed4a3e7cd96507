/**
 * The peripheral sections: `ble`, `nfc`, `gpio` and `pulse`. Board profiles (boards/*.json) fill them per
 * hardware; the config file may override any field. Every field has a default, so a section may be left out.
 */
import * as z from "zod";
import { CHECKIN_SERVICE_UUID, MAX_PULSE_MS, MIN_PULSE_MS, TEST_COMPANY_ID } from "../core/devices.js";
import { parseAmount } from "../core/money.js";
import { SCRYPT_HASH_FORMAT } from "../core/scryptHash.js";
import { intIn, isRecord, nonEmpty } from "./rules.js";

/** Decimal places of amounts in the pulse section (DKK and EUR: 2, like `CURRENCY_DECIMALS`). */
const AMOUNT_DECIMALS = 2;

/** A pin as the IO plugin names it: a number (BCM, Firmata) or a name such as `GPIO17` or `P1-11`. */
export const pinSchema = z.union([
  intIn(0, 999),
  z.string().regex(/^[A-Za-z0-9_.-]{1,16}$/, "must be a pin number or a name such as GPIO17"),
]);

/** The Bluetooth LE check-in beacon (drivers/ble; advertisement format in drivers/ble/advertisement.ts). */
export const bleSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** `bleno` needs @abandonware/bleno and CAP_NET_RAW + CAP_NET_ADMIN (reliability.md §3.3). */
    kind: z.enum(["bleno", "sim"]).default("sim"),
    /** 16-bit Bluetooth SIG company id of the manufacturer data; 0xFFFF (65535) is the test value. */
    companyId: intIn(0, 0xffff).default(TEST_COMPANY_ID),
    /** The 128-bit service UUID in the primary advertising packet. */
    serviceUuid: z
      .string()
      .regex(
        /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
        "must be a UUID",
      )
      .default(CHECKIN_SERVICE_UUID),
  })
  .prefault({});

/** scrypt hash string of a badge UID (the one format: src/core/scryptHash.ts); never a raw UID. */
const BADGE_HASH = SCRYPT_HASH_FORMAT;

/** The NFC reader: technician badges and writing the check-in tag (drivers/nfc). */
export const nfcSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** `pcsc` needs nfc-pcsc and the pcscd daemon. */
    kind: z.enum(["pcsc", "sim"]).default("sim"),
    /** Technician badges: a name for the audit log and the scrypt hash of the UID (`vendd` never stores UIDs). */
    badges: z
      .array(
        z.strictObject({
          name: nonEmpty(64),
          hash: z.string().regex(BADGE_HASH, "must be scrypt$N$r$p$salt$key (a hash, never a raw UID)"),
        }),
      )
      .max(100, "must have at most 100 items")
      .default([]),
    /**
     * `sim` only (tests, demos): a Unix socket path the simulated reader listens on; each line `present
     * <uid>` or `remove` moves a card (drivers/nfc/simFeed.ts). Null: no feed.
     */
    simFeed: z.string().min(1).max(1000).nullable().default(null),
  })
  .prefault({});

/** General-purpose I/O: the panel pins and the port the pulse output uses (drivers/gpio). */
export const gpioSchema = z
  .strictObject({
    /** `johnny-five` imports johnny-five and the IO plugin (optional dependencies) when opened. */
    kind: z.enum(["sim", "johnny-five"]).default("sim"),
    /** The johnny-five IO plugin: `pi-io` (Raspberry Pi header) or `firmata` (a board on a serial port). */
    io: z
      .strictObject({
        plugin: z.enum(["pi-io", "firmata"]).default("pi-io"),
        /** Firmata's serial port; null = johnny-five scans for it. */
        port: nonEmpty(4096).nullable().default(null),
      })
      .prefault({}),
    /** The unit's own controls; null = not fitted. */
    pins: z
      .strictObject({
        statusLed: pinSchema.nullable().default(null),
        serviceButton: pinSchema.nullable().default(null),
        doorSwitch: pinSchema.nullable().default(null),
      })
      .prefault({}),
  })
  .prefault({});

/** A positive decimal amount string with at most 2 decimals, e.g. `"5.00"` (parsed exactly at the edge). */
function amountText() {
  return z.string().superRefine((text, ctx) => {
    const problem = amountProblem(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
}

function amountProblem(text: string): string | null {
  if (!/^\d+(\.\d+)?$/.test(text)) return 'must be a decimal amount such as "5.00"';
  if ((text.split(".")[1] ?? "").length > AMOUNT_DECIMALS) {
    return `must have at most ${AMOUNT_DECIMALS} decimals`;
  }
  try {
    return parseAmount(text, AMOUNT_DECIMALS) > 0 ? null : "must be greater than 0";
  } catch {
    return "is out of range";
  }
}

const pulseMs = (fallback: number) => intIn(MIN_PULSE_MS, MAX_PULSE_MS).default(fallback);

/** A machine credited by pulses (vending-mdb §6; drivers/vmc/pulse), used when `vmc.driver` is `pulse`. */
export const pulseSchema = z
  .strictObject({
    /** The machine's one price; null = not configured (required with the pulse driver). */
    price: amountText().nullable().default(null),
    /** Credit of one pulse; `price` must be a whole multiple of it. */
    valuePerPulse: amountText().default("1.00"),
    /** Active time of each pulse, ms (vending-mdb §6: receivers need about 10 ms or more). */
    widthMs: pulseMs(50),
    /** Inactive time before each pulse, ms. */
    gapMs: pulseMs(100),
    /** True when logic 1 on the output shorts the line (transistor stage). */
    activeHigh: z.boolean().default(true),
    /** True when a high level on the inhibit input means inhibited. */
    inhibitActiveHigh: z.boolean().default(false),
    /** Check-in flow: request the vend when the session starts instead of waiting for the start button. */
    requestOnSession: z.boolean().default(false),
    pins: z
      .strictObject({
        /** The pulse output (through an isolating stage); required with the pulse driver. */
        output: pinSchema.nullable().default(null),
        /** The machine's inhibit/busy signal; null = not wired. */
        inhibit: pinSchema.nullable().default(null),
        /** The customer's start button; null = not wired. */
        start: pinSchema.nullable().default(null),
      })
      .prefault({}),
  })
  .prefault({});

/** Minor units of a decimal amount the schema accepted (`amountText`). */
export function pulseAmountMinor(text: string): number {
  return parseAmount(text, AMOUNT_DECIMALS);
}

/** Issues of the pulse section that depend on `vmc.driver` (paths relative to the root). */
export function pulseIssues(driver: unknown, pulse: unknown): { path: string[]; message: string }[] {
  if (driver !== "pulse" || !isRecord(pulse)) return [];
  const p = pulse;
  const issues: { path: string[]; message: string }[] = [];
  const pins = isRecord(p.pins) ? p.pins : {};
  if (pins.output === null || pins.output === undefined) {
    issues.push({ path: ["pulse", "pins", "output"], message: "required when vmc.driver is pulse" });
  }
  if (p.price === null || p.price === undefined) {
    issues.push({ path: ["pulse", "price"], message: "required when vmc.driver is pulse" });
  } else if (typeof p.price === "string" && typeof p.valuePerPulse === "string") {
    if (amountProblem(p.price) !== null || amountProblem(p.valuePerPulse) !== null) return issues;
    // vending-mdb §6: pulses = price ÷ value per pulse, which must divide evenly.
    if (pulseAmountMinor(p.price) % pulseAmountMinor(p.valuePerPulse) !== 0) {
      issues.push({ path: ["pulse", "price"], message: "must be a whole multiple of pulse.valuePerPulse" });
    }
  }
  return issues;
}
