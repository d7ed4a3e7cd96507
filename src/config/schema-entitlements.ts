/**
 * The `entitlements` section (issue 18): member badges take plan vends decided at the unit from a list the
 * fleet signs with the **entitlement key**. The unit trusts exactly the key named here for lists, nothing
 * else: a config or release key (`updates.publicKeys`) signs bundles, never lists, and may not be named
 * here (operators make a separate key with `vendd keys generate`). Absent (null): no plan vends, every
 * badge that is not a technician's is ignored.
 */
import * as z from "zod";
import { type CrossIssue, nonEmpty } from "./rules.js";
import { minisignKeySchema } from "./schema-updates.js";

/** The entitlement public key: a minisign key line (RW..., 56 characters) or the absolute path of a .pub file. */
export const entitlementKeySchema = z.union([
  minisignKeySchema,
  nonEmpty(4096).refine(
    (s) => s.startsWith("/"),
    "must be a minisign public key line (RW..., 56 Base64 characters) or the absolute path of a .pub file",
  ),
]);

export const entitlementsSchema = z
  .strictObject({
    /** The entitlement public key (line or .pub file path). Lists signed by any other key are refused. */
    publicKey: entitlementKeySchema,
    /** The signed list `{document, signature}` as JSON; written by `install` (the fleet link), read at start. */
    listFile: nonEmpty(4096).default("/var/lib/vendd/entitlements.json"),
    /**
     * A member over the allowance (or whose badge is not on the list): `pay` offers the normal payment flow,
     * `deny` refuses the vend with a message on the screen.
     */
    overAllowance: z.enum(["pay", "deny"]).default("pay"),
    /** How long after a member's tap the next vend request is theirs, ms. */
    tapWindowMs: z.number().int().min(5_000).max(300_000).default(60_000),
  })
  .nullable()
  .default(null);

export type EntitlementsConfig = NonNullable<z.output<typeof entitlementsSchema>>;

/** The cross-check: the entitlement key must not be one of the bundle keys (a separate key, by rule). */
export function entitlementKeyIssues(root: { entitlements?: unknown; updates?: unknown }): CrossIssue[] {
  const e = root.entitlements;
  const u = root.updates;
  if (typeof e !== "object" || e === null || typeof u !== "object" || u === null) return [];
  const key = (e as { publicKey?: unknown }).publicKey;
  const keys = (u as { publicKeys?: unknown }).publicKeys;
  if (typeof key !== "string" || !Array.isArray(keys) || !keys.includes(key)) return [];
  return [
    {
      path: ["entitlements", "publicKey"],
      message:
        "must be a separate key from updates.publicKeys: a config or release key never signs entitlement lists (make one with `vendd keys generate`)",
    },
  ];
}
