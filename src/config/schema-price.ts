/**
 * Amounts of the `engine` section and the bounds of `engine.maxPrice`, the highest price the selection flow
 * pays for. In that flow the price comes from the vending machine (VEND REQUEST), so the unit must not
 * trust it: a VMC, a miswired adapter or a spoofed serial line once opened a payment for 99,999,999,999.00
 * DKK. The bounds the schema enforces on `maxPrice` itself:
 * - the MDB price field (vending-mdb §1.6): standard prices are 16-bit, `FFFFh` meaning "unknown", so with
 *   scale factor X = 1 and Y = `vmc.decimals` the largest price is 65534 × 10^-Y (655.34 at Y = 2). It
 *   applies to the MDB drivers (`mdb-adapter`, and `sim`, which simulates one);
 * - the payment service: amounts are JSON numbers in V10 (pos-v10 §14), exact only below 10^13 minor units
 *   (src/core/money.ts `amountToJson`); the seeds state no other upper bound for a PoS payment.
 * With the pulse driver the price is `pulse.price`, which must not exceed `maxPrice`.
 */
import * as z from "zod";
import { formatAmount, type Minor, parseAmount } from "../core/money.js";
import { type CrossIssue, isRecord } from "./rules.js";

/** Decimal places of the configured currencies (DKK and EUR both have 2). */
export const CURRENCY_DECIMALS = 2;

/** Largest standard MDB price on the wire: 16 bits, `FFFFh` reserved for "unknown" (vending-mdb §1.6). */
export const MDB_MAX_WIRE_PRICE = 0xfffe;

/** Amounts below 10^13 minor units are exact as V10 JSON numbers (src/core/money.ts `amountToJson`). */
export const SERVICE_MAX_AMOUNT_MINOR: Minor = 10 ** 13 - 1;

/** Default of `engine.maxPrice`: generous for vending, and within the MDB field at the default Y = 2. */
export const DEFAULT_MAX_PRICE = "500.00";

/**
 * The largest price, in the currency's minor units, a VMC can send in a standard MDB price field with
 * Y = `decimals` (and X = 1): 65534 at Y = 2 (655.34), 6553400 at Y = 0, 6553 at Y = 3.
 */
export function mdbMaxPriceMinor(decimals: number): Minor {
  return decimals <= CURRENCY_DECIMALS
    ? MDB_MAX_WIRE_PRICE * 10 ** (CURRENCY_DECIMALS - decimals)
    : Math.floor(MDB_MAX_WIRE_PRICE / 10 ** (decimals - CURRENCY_DECIMALS));
}

/**
 * A positive decimal amount string such as `"20.00"`, parsed exactly into minor units later (the value is
 * kept as written, so `config print` shows what the file says); `max` is an inclusive bound in minor units.
 */
export function amountSchema(example: string, max: Minor = SERVICE_MAX_AMOUNT_MINOR) {
  return z.string().superRefine((text, ctx) => {
    const problem = amountProblem(text, example, max);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
}

function amountProblem(text: string, example: string, max: Minor): string | null {
  if (!/^\d+(\.\d+)?$/.test(text)) return `must be a decimal amount such as "${example}"`;
  const frac = text.split(".")[1] ?? "";
  if (frac.length > CURRENCY_DECIMALS) return `must have at most ${CURRENCY_DECIMALS} decimals`;
  const minor = minorOf(text);
  if (minor === null || minor > max) return `must be at most ${formatAmount(max, CURRENCY_DECIMALS)}`;
  return minor > 0 ? null : "must be greater than 0";
}

/** Minor units of a decimal amount string, or null when it is not one (or out of range). */
export function minorOf(text: unknown): Minor | null {
  if (typeof text !== "string") return null;
  try {
    return parseAmount(text, CURRENCY_DECIMALS);
  } catch {
    return null;
  }
}

/**
 * Cross-field bounds of `engine.maxPrice` (see the module comment), on the whole config as parsed so far
 * (board merged, possibly half-valid: every field is guarded).
 */
export function maxPriceIssues(root: Record<string, unknown>): CrossIssue[] {
  const engine = isRecord(root.engine) ? root.engine : {};
  const max = minorOf(engine.maxPrice ?? DEFAULT_MAX_PRICE);
  if (max === null) return [];
  const vmc = isRecord(root.vmc) ? root.vmc : {};
  const driver = vmc.driver ?? "sim";
  const decimals = vmc.decimals ?? 2;
  if ((driver === "mdb-adapter" || driver === "sim") && Number.isInteger(decimals)) {
    const limit = mdbMaxPriceMinor(Number(decimals));
    if (max > limit) {
      const shown = formatAmount(limit, CURRENCY_DECIMALS);
      return [
        {
          path: ["engine", "maxPrice"],
          message:
            `must be at most ${shown}, the largest price the MDB price field carries with ` +
            `vmc.decimals ${String(decimals)} (vending-mdb §1.6; the default is ${DEFAULT_MAX_PRICE})`,
        },
      ];
    }
  }
  const pulse = isRecord(root.pulse) ? root.pulse : {};
  const price = minorOf(pulse.price);
  if (driver === "pulse" && price !== null && price > max) {
    return [
      { path: ["pulse", "price"], message: "must be at most engine.maxPrice (a vend above it is denied)" },
    ];
  }
  return [];
}
