/**
 * The `fleet` section: the link to a fleet server (`vendd fleet serve`, issue 16). Absent: the unit has no
 * fleet link, writes no outbox events and sends nothing. The fleet is never in the money path: the unit vends
 * and settles on its own, and reports afterwards (src/daemon/fleetLink.ts).
 */
import * as z from "zod";
import { MAX_BATCH_EVENTS } from "../core/fleetWire.js";
import { ALWAYS, crossCheck, httpUrl, intIn, nonEmpty } from "./rules.js";
import { entitlementKeySchema } from "./schema-entitlements.js";

/** Where the unit key is when the config does not say (`fleet.keyFile`). */
export const DEFAULT_UNIT_KEY_FILE = "/var/lib/vendd/fleet.key";

export const fleetSchema = z
  .strictObject({
    /** The fleet server's base URL; the unit API is under `/api/unit/v1`. */
    url: httpUrl().refine((u) => !/[?#]/.test(u), "must be a base URL without a query or fragment"),
    /** The unit's Ed25519 private key (PKCS#8 PEM, mode 0600), made by `vendd fleet enroll`. */
    keyFile: nonEmpty(4096).default(DEFAULT_UNIT_KEY_FILE),
    /**
     * A private certificate authority for an `https` fleet (PEM file): the unit trusts the fleet's
     * certificate when it chains to this CA, and only then (src/core/fleetCa.ts). Absent: the system's
     * public authorities.
     */
    caFile: nonEmpty(4096).optional(),
    /**
     * The fleet's values public key (issue 41): a minisign key line (RW...) or the absolute path of a .pub
     * file. The unit fetches the values the fleet holds for it (its groups' and its own) and takes them only
     * signed by this key and made for this unit. Absent: the unit takes no fleet-held values.
     */
    valuesKey: entitlementKeySchema.optional(),
    /** Seconds between heartbeats. */
    heartbeatSeconds: intIn(5, 3600).default(60),
    /**
     * Issue 41: the bound of the jitter before the daemon fetches a bundle a heartbeat answer hints, seconds
     * (drawn from [0, this)): 60 spreads 10,000 units told in the same minute over that minute.
     */
    bundleJitterSeconds: intIn(0, 600).default(60),
    /** Most events per batch. */
    batchEvents: intIn(1, MAX_BATCH_EVENTS).default(200),
    /** `vendd status` warns when more events than this wait to be delivered… */
    backlogWarnEvents: intIn(1, 10_000_000).default(1000),
    /** …or when the oldest undelivered event is older than this many hours. */
    backlogWarnHours: intIn(1, 8760).default(24),
    /** Days a delivered event stays in the journal. */
    retentionDays: intIn(1, 3650).default(35),
    /** Days an undelivered event is kept; older ones are dropped (a `fault` `outboxOverflow` says so). */
    maxBacklogDays: intIn(1, 3650).default(42),
  })
  .superRefine(
    crossCheck((f) =>
      typeof f.maxBacklogDays === "number" &&
      typeof f.backlogWarnHours === "number" &&
      f.backlogWarnHours > f.maxBacklogDays * 24
        ? [
            {
              path: ["backlogWarnHours"],
              message: `must not exceed maxBacklogDays (${f.maxBacklogDays}) in hours: the warning would come after events are dropped`,
            },
          ]
        : [],
    ),
    ALWAYS,
  )
  .optional();
