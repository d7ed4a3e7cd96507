/**
 * The refusals of a bundle before anything is touched (reliability.md §4.2): its size, its target, expiry
 * and version against the high-water mark and earlier rollbacks, and what its config may not change: the
 * unit's identity and the updates section.
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { IDENTITY_FILE_NAME, identityChanges, identityKeysSet } from "../config/identity.js";
import { toConfigInput, type VenddConfig } from "../config/load.js";
import { refuse, type UpdateSettings } from "./applyRun.js";
import { MAX_BUNDLE_BYTES, type VerifiedBundle } from "./bundle.js";
import type { UpdateState } from "./state.js";

/**
 * Before this instant the unit's clock is taken as not set (a Pi without RTC boots in 1970 or at its last
 * fake-hwclock save until NTP answers): the expiry cannot be enforced, so only the version check holds
 * and the commit is flagged `untrusted_time` (reliability.md §4.2).
 */
export const TRUSTED_TIME_FROM = Date.parse("2026-01-01T00:00:00Z");

/**
 * Target, expiry, high-water mark and earlier rollbacks: refusals before anything is touched. Returns a
 * note for the outcome when the expiry could not be checked.
 */
export function checkPolicy(
  bundle: VerifiedBundle,
  settings: UpdateSettings,
  state: UpdateState,
  now: number,
): string | null {
  const { meta } = bundle;
  const mine = [settings.unitId, ...(settings.fleet === null ? [] : [settings.fleet])];
  if (!meta.targets.some((t) => mine.includes(t))) {
    refuse("wrong_target", `the bundle is for ${meta.targets.join(", ")}, not for ${mine.join(" or ")}`);
  }
  const trusted = now >= TRUSTED_TIME_FROM;
  if (trusted && Date.parse(meta.expires) <= now) refuse("expired", `the bundle expired at ${meta.expires}`);
  if (meta.version < state.highWater) {
    refuse("older", `version ${meta.version} is older than the version in force (${state.highWater})`);
  }
  if (meta.version === state.highWater) refuse("equal", `version ${meta.version} is already in force`);
  if (state.rolledBack.includes(meta.version)) {
    refuse("rolled_back_before", `version ${meta.version} was rolled back before; a fix needs a new version`);
  }
  return trusted
    ? null
    : `the clock (${new Date(now).toISOString()}) is not set: the expiry ${meta.expires} was not checked`;
}

/** Reads a bundle file within the size limit. */
export function readBundleFile(file: string): Buffer {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    refuse("unreadable", `cannot read ${basename(file)}: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
  }
  if (size > MAX_BUNDLE_BYTES) refuse("not_a_bundle", "the bundle is larger than 512 MiB");
  return readFileSync(file);
}

/** What the guard knows about the candidate besides its parsed config. */
export interface GuardInput {
  /** A locally authorised change (the console), not a signed bundle. */
  local: boolean;
  /** The candidate config file as written (before defaults and layers). */
  raw: unknown;
  /** The unit's identity file when it has one (src/config/identity.ts), else null. */
  identityFile: string | null;
}

/**
 * What a new config may not change (reliability.md §4.2; issue 41), one refusal naming the key:
 * - a signed bundle may not set or change the unit's identity (src/config/identity.ts: its id and name,
 *   point of sale and merchant, key and secrets files, devices, state and journal paths, which include
 *   `updates.stateDir` and `updates.releaseRoot`: the applier would lose its state). With an identity file
 *   the bundle may not name any identity key; without one (a unit still on one file, docs/operators.md) it
 *   may carry the unit's own identity unchanged;
 * - it must keep at least one key (or the unit could never be updated again);
 * - a local change (the console) may not touch the `updates` section at all: only a signed bundle changes
 *   who is trusted. A local change is the unit owner's own and may change its identity.
 */
export function configGuard(
  current: VenddConfig,
  next: VenddConfig,
  c: GuardInput,
): { code: string; message: string } | null {
  const a = current.updates;
  const b = next.updates;
  if (c.local && JSON.stringify(a) !== JSON.stringify(b)) {
    return { code: "updates_changed", message: "a local config change may not change the updates section" };
  }
  if (!c.local) {
    const stays = `identity keys stay on the unit: ${c.identityFile ?? `its identity file ${IDENTITY_FILE_NAME}`}, docs/operators.md`;
    const set = c.identityFile === null ? [] : identityKeysSet(c.raw);
    if (set.length > 0) return { code: "identity", message: `the bundle sets ${set.join(", ")} (${stays})` };
    const changed = identityChanges(toConfigInput(current), toConfigInput(next));
    if (changed.length > 0)
      return { code: "identity", message: `the bundle changes ${changed.join(", ")} (${stays})` };
  }
  if (a.publicKeys.length > 0 && b.publicKeys.length === 0) {
    return {
      code: "lockout",
      message: "the new config lists no updates.publicKeys: the unit could never be updated again",
    };
  }
  return null;
}
