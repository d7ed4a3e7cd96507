/**
 * The DEX audit reader (issue 36, docs/dex.md): the machine's DEX jack on a second serial port, the unit's
 * communication id and when to read. Absent or `enabled: false` = no DEX reads.
 */
import * as z from "zod";
import { intIn, nonEmpty } from "./rules.js";

/** HH:MM on the 24-hour clock. */
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

export const dexSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** The USB-RS232 adapter on the machine's DEX jack (e.g. /dev/serial/by-id/usb-…); 9600 8N1. */
    device: nonEmpty(4096).nullable().default(null),
    /** The unit's DEX communication id: 3 letters and 7 digits (EVA-DTS 6.0). */
    commId: z
      .string()
      .regex(/^[A-Z]{3}\d{7}$/, "must be 3 capital letters and 7 digits (e.g. VND0000001)")
      .default("VND0000001"),
    /** Read times of day, HH:MM in `timeZone`; twice a day by default, as telemetry suites do. */
    schedule: z
      .array(z.string().regex(HHMM, "must be HH:MM (00:00-23:59)"))
      .min(1)
      .max(24)
      .default(["02:00", "14:00"]),
    /** The IANA time zone of `schedule` (a day always says which zone it is in). */
    timeZone: nonEmpty(64).default("UTC"),
    /** No read starts during a vend or this many seconds after one. */
    quietSeconds: intIn(1, 600).default(10),
    /** Session attempts per read (each up to 3 ENQs, 3 resends per block). */
    attempts: intIn(1, 5).default(3),
  })
  .superRefine((dex, ctx) => {
    if (dex.enabled && dex.device === null)
      ctx.addIssue({
        code: "custom",
        path: ["device"],
        message: "required when dex.enabled is true (the DEX adapter's serial port)",
      });
    if (!validZone(dex.timeZone))
      ctx.addIssue({
        code: "custom",
        path: ["timeZone"],
        message: `'${dex.timeZone.slice(0, 64)}' is not an IANA time zone (e.g. Europe/Copenhagen)`,
      });
  })
  .prefault({});

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export type DexConfig = z.output<typeof dexSchema>;
