/**
 * The console's brute-force policy: after LOCKOUT_AFTER failed logins in a row a lockout of 30 s, and each
 * further failure (made once the lockout ended) doubles it: 30 s, 60 s, 120 s ... capped at one day. The
 * attempts come from the journal (committed before each check), so a restart does not reset the count; a
 * pending attempt (the daemon died while checking) counts as a failure. A successful login resets it.
 */
import { DAY_MS } from "../core/days.js";

export const LOCKOUT_AFTER = 5;
export const LOCKOUT_BASE_MS = 30_000;
export const LOCKOUT_MAX_MS = DAY_MS;

export interface AttemptLike {
  at: number;
  state: "pending" | "ok" | "failed";
}

/** Lockout length after `failures` failures in a row (0 when not locked). */
export function lockoutMs(failures: number): number {
  if (failures < LOCKOUT_AFTER) return 0;
  const doublings = failures - LOCKOUT_AFTER;
  return doublings >= 22 ? LOCKOUT_MAX_MS : Math.min(LOCKOUT_MAX_MS, LOCKOUT_BASE_MS * 2 ** doublings);
}

/**
 * Until when logins are refused (ms since the epoch), or null. `since` is every attempt after the last
 * success, oldest first.
 */
export function lockedUntil(since: readonly AttemptLike[], now: number): number | null {
  const failures = since.filter((a) => a.state !== "ok");
  const last = failures.at(-1);
  if (last === undefined) return null;
  const ms = lockoutMs(failures.length);
  if (ms === 0) return null;
  const until = last.at + ms;
  return until > now ? until : null;
}
