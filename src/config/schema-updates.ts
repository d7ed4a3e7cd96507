/**
 * The `updates` section: who may sign bundles for this unit, where they arrive, and how an applied one is
 * judged healthy (README "Updates"; reliability.md §4). The applier reads it from the config in force, so a
 * signed bundle can rotate the keys for the next one.
 */
import * as z from "zod";
import { DAY_MS } from "../core/days.js";
import { ALWAYS, crossCheck, httpUrl, intIn, nonEmpty } from "./rules.js";

/** A minisign public key line: Base64 of `Ed` ‖ key id (8) ‖ Ed25519 key (32), as `minisign -P` takes it. */
export const minisignKeySchema = z
  .string()
  .refine(
    (s) =>
      /^RW[A-Za-z0-9+/]{54}$/.test(s) && Buffer.from(s, "base64").subarray(0, 2).toString("latin1") === "Ed",
    "must be an Ed25519 minisign public key line (the second line of a .pub file: 56 Base64 characters, RW...)",
  );

/** A fleet name or unit id a bundle targets. */
export const targetNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    "must be 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)",
  );

export const updatesSchema = z
  .strictObject({
    /** Trusted signing keys; more than one during a key rotation. Empty: the unit takes no bundles. */
    publicKeys: z
      .array(minisignKeySchema)
      .max(16, "must list at most 16 keys")
      .refine((keys) => new Set(keys).size === keys.length, "must not list a key twice")
      .default([]),
    /** Distinct trusted keys a release bundle must be signed by (k of n); config bundles need one. */
    threshold: intIn(1, 16).default(1),
    /** The fleet this unit belongs to: a bundle targets it or `unit.id`. */
    fleet: targetNameSchema.nullable().default(null),
    /** Where `vendd bundle pull` fetches the newest bundle (conditional GET); null = no pulling. */
    pullUrl: httpUrl().nullable().default(null),
    /** Directory `vendd-bundle.path` watches; `vendd bundle apply --inbox` takes bundles from it. */
    inbox: nonEmpty(4096).default("/var/lib/vendd/inbox"),
    /** The applier's state: high-water mark, last known good config, outcome (read by the daemon). */
    stateDir: nonEmpty(4096).default("/var/lib/vendd/updates"),
    /** Releases live in `<releaseRoot>/releases/<version>`; `<releaseRoot>/current` is the one running. */
    releaseRoot: nonEmpty(4096).default("/opt/vendd"),
    /** How the applier restarts the daemon (argv, no shell). */
    restartCommand: z
      .array(nonEmpty(4096))
      .min(1, "must name a program")
      .default(["systemctl", "restart", "vendd.service"]),
    health: z
      .strictObject({
        /** How long the restarted daemon must stay healthy before the bundle is committed. */
        holdMs: intIn(0, 3_600_000).default(60_000),
        /** How long it has, from the restart, to become ready and then healthy for `holdMs`. */
        timeoutMs: intIn(1000, 7_200_000).default(300_000),
        /** Interval of the status queries over the control socket. */
        pollMs: intIn(10, 60_000).default(2000),
      })
      .prefault({}),
    pull: z
      .strictObject({
        /** First wait after a failed pull; doubles per failure, with jitter, up to `maxBackoffMs`. */
        minBackoffMs: intIn(1000, DAY_MS).default(60_000),
        maxBackoffMs: intIn(1000, 604_800_000).default(21_600_000),
        /** Time limit of one download. */
        timeoutMs: intIn(1000, 3_600_000).default(600_000),
      })
      .prefault({}),
  })
  .superRefine(
    crossCheck((u) => {
      const keys = Array.isArray(u.publicKeys) ? u.publicKeys.length : 0;
      const threshold = typeof u.threshold === "number" ? u.threshold : 1;
      return keys > 0 && threshold > keys
        ? [{ path: ["threshold"], message: `must not exceed the number of publicKeys (${keys})` }]
        : [];
    }),
    ALWAYS,
  )
  .prefault({});
