/**
 * The technician console (issue 13): its control socket, the PIN hash, idle logout and the test vend.
 */
import * as z from "zod";
import { PIN_HASH_FORMAT, parsePinHash } from "../core/pin.js";
import { intIn, nonEmpty } from "./rules.js";
import { amountSchema } from "./schema-price.js";

export const consoleSchema = z
  .strictObject({
    /** Control socket; null = `control.sock` next to the journal. */
    socket: nonEmpty(107).nullable().default(null),
    /** scrypt hash of the console PIN (`vendd console hash-pin`); null = no PIN login (badges only). */
    pinHash: z
      .string()
      .regex(PIN_HASH_FORMAT, "must be scrypt$N$r$p$salt$key (from `vendd console hash-pin`)")
      .refine((h) => typeof parsePinHash(h) !== "string", "scrypt parameters out of range")
      .nullable()
      .default(null),
    /** Minutes without input after which the console logs out. */
    idleTimeoutMinutes: intIn(1, 240).default(5),
    /** Amount of `test-vend` without an argument. */
    testVendAmount: amountSchema("1.00").default("1.00"),
    /** Item number the test vend selects. */
    testVendItem: intIn(0, 65_535).default(1),
  })
  .prefault({});
