/**
 * The refusals of a bundle before anything is touched (reliability.md §4.2): its size, its target, expiry
 * and version against the high-water mark and earlier rollbacks, and what its config may not change about
 * updates.
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { VenddConfig } from "../config/load.js";
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

/**
 * What a new config may not change about updates: the state and release locations (the applier would lose
 * its state), and it must keep at least one key (or the unit could never be updated again). A local change
 * (the console) may not touch the `updates` section at all: only a signed bundle changes who is trusted.
 */
export function updatesGuard(
  current: VenddConfig,
  next: VenddConfig,
  local: boolean,
): { code: string; message: string } | null {
  const a = current.updates;
  const b = next.updates;
  if (local && JSON.stringify(a) !== JSON.stringify(b)) {
    return { code: "updates_changed", message: "a local config change may not change the updates section" };
  }
  if (a.stateDir !== b.stateDir || a.releaseRoot !== b.releaseRoot) {
    return {
      code: "updates_moved",
      message: "a bundle may not move updates.stateDir or updates.releaseRoot",
    };
  }
  if (a.publicKeys.length > 0 && b.publicKeys.length === 0) {
    return {
      code: "lockout",
      message: "the new config lists no updates.publicKeys: the unit could never be updated again",
    };
  }
  return null;
}
