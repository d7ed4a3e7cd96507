/**
 * Dashboard accounts: users with scrypt password hashes, server-side sessions and login throttling, all in
 * the fleet database so several fleet processes sharing it agree (fleet.md §6).
 *
 * - Passwords: scrypt with a per-user 16-byte salt, stored `scrypt$N$r$p$salt$hash` (src/core/scryptHash.ts)
 *   (base64url); compared with timingSafeEqual. An unknown user is checked against a dummy hash, so the
 *   failure path costs the same whether or not the name exists.
 * - Sessions: a random 256-bit token in the cookie; the database holds only its SHA-256 (`web_sessions.id`),
 *   so a copy of the database opens no session. A new token at every login; idle expiry; logout deletes it.
 * - Throttling: failures in the last 15 minutes, counted per account (since its last success) and per remote
 *   address, from `login_attempts`.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { DAY_MS } from "../../core/days.js";
import { createScryptHash, parseScryptHash, verifyScryptHash } from "../../core/scryptHash.js";
import type { FleetContext } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";
import {
  deleteExpiredWebSessions,
  deleteWebSession,
  extendWebSession,
  failedLogins,
  insertUser,
  insertWebSession,
  lastLoginSince,
  listUsers,
  purgeLoginAttempts,
  type Role,
  recordLoginAttempt,
  removeUser,
  userForLogin,
  userIdOf,
  webSessionOf,
} from "./accountsStore.js";

export type { Role };
export { listUsers, removeUser };

export const ROLES: readonly Role[] = ["viewer", "manager"];

/** scrypt's N for new password hashes (r 8, p 1: src/core/scryptHash.ts). */
export const SCRYPT_N = 16384;

/** A session unused for this long is gone. */
export const SESSION_IDLE_MS = 8 * 60 * 60 * 1000;
/** The throttle's window and limits. */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const MAX_FAILURES_PER_ACCOUNT = 5;
export const MAX_FAILURES_PER_ADDRESS = 20;
/** Login attempts older than this are deleted. */
const ATTEMPT_RETENTION_MS = DAY_MS;

export const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const MIN_PASSWORD_LENGTH = 10;

export async function hashPassword(password: string): Promise<string> {
  const hash = await createScryptHash(password, SCRYPT_N);
  if (hash === null) throw new Error("scrypt parameters out of range");
  return hash;
}

/** True when `password` matches `stored`; false for a wrong password or a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseScryptHash(stored);
  return typeof parsed !== "string" && (await verifyScryptHash(password, parsed));
}

let dummyHash: Promise<string> | undefined;
/** What an unknown user's password is checked against, so that failure takes as long as a wrong password. */
function dummy(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString("hex"));
  return dummyHash;
}

export function checkPasswordRules(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `the password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > 1024) return "the password is longer than 1024 characters";
  return null;
}

export class AccountError extends Error {
  override readonly name = "AccountError";
}

export async function addUser(
  db: Kysely<FleetDatabase>,
  username: string,
  password: string,
  role: Role,
  now: number,
): Promise<void> {
  if (!USERNAME.test(username))
    throw new AccountError(
      "a user name is 1-64 letters, digits or . _ @ - (starting with a letter or digit)",
    );
  const rule = checkPasswordRules(password);
  if (rule !== null) throw new AccountError(rule);
  const existing = await userIdOf(db, username);
  if (existing !== undefined) throw new AccountError(`user ${username} exists already`);
  const password_hash = await hashPassword(password);
  await insertUser(db, { username, password_hash, role, created_at: now });
}

export function tokenId(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export interface Session {
  /** SHA-256 of the token. */
  id: string;
  userId: number;
  username: string;
  role: Role;
  csrf: string;
}

export type LoginResult =
  | { kind: "ok"; token: string; session: Session }
  | { kind: "refused" }
  | { kind: "throttled"; retryAfterSeconds: number };

/** Seconds until the oldest failure counted against `limit` leaves the window; null when under the limit. */
function retryAfter(failures: readonly number[], limit: number, now: number): number | null {
  if (failures.length < limit) return null;
  const sorted = [...failures].sort((a, b) => b - a);
  // The limit-th most recent failure must leave the window before another attempt is allowed.
  const pivot = sorted[limit - 1] ?? now;
  return Math.max(1, Math.ceil((pivot + THROTTLE_WINDOW_MS - now) / 1000));
}

async function throttled(
  ctx: FleetContext,
  username: string,
  remote: string,
  now: number,
): Promise<number | null> {
  const since = now - THROTTLE_WINDOW_MS;
  const lastOk = await lastLoginSince(ctx.db, username, since);
  const accountSince = Math.max(
    since,
    lastOk?.at === null || lastOk?.at === undefined ? since : Number(lastOk.at) + 1,
  );
  const byAccount = await failedLogins(ctx.db, "username", username, accountSince);
  const byAddress = await failedLogins(ctx.db, "remote", remote, since);
  const a = retryAfter(
    byAccount.map((r) => Number(r.at)),
    MAX_FAILURES_PER_ACCOUNT,
    now,
  );
  const b = retryAfter(
    byAddress.map((r) => Number(r.at)),
    MAX_FAILURES_PER_ADDRESS,
    now,
  );
  if (a === null && b === null) return null;
  return Math.max(a ?? 0, b ?? 0);
}

/**
 * Checks a login. Refused and throttled attempts both record a failure (a throttled client keeps itself
 * throttled); the caller answers 401/429 without saying whether the user exists.
 */
export async function login(
  ctx: FleetContext,
  usernameIn: string,
  password: string,
  remote: string,
): Promise<LoginResult> {
  const now = ctx.clock.now();
  const username = usernameIn.slice(0, 64);
  await purgeLoginAttempts(ctx.db, now - ATTEMPT_RETENTION_MS);
  const wait = await throttled(ctx, username, remote, now);
  if (wait !== null) {
    await recordLoginAttempt(ctx.db, { username, remote, at: now, ok: 0 });
    ctx.logger.warn({ username, remote }, "dashboard login throttled");
    return { kind: "throttled", retryAfterSeconds: wait };
  }
  const user = await userForLogin(ctx.db, username);
  const ok = await verifyPassword(password.slice(0, 1024), user?.password_hash ?? (await dummy()));
  await recordLoginAttempt(ctx.db, { username, remote, at: now, ok: ok && user !== undefined ? 1 : 0 });
  if (!ok || user === undefined) {
    ctx.logger.info({ username, remote }, "dashboard login refused");
    return { kind: "refused" };
  }
  const token = randomBytes(32).toString("base64url");
  const session: Session = {
    id: tokenId(token),
    userId: user.id,
    username: user.username,
    role: user.role,
    csrf: randomBytes(32).toString("base64url"),
  };
  await insertWebSession(ctx.db, {
    id: session.id,
    user_id: user.id,
    csrf: session.csrf,
    created_at: now,
    expires_at: now + SESSION_IDLE_MS,
  });
  ctx.logger.info({ username, remote }, "dashboard login");
  return { kind: "ok", token, session };
}

/** The session of a cookie token, its idle expiry pushed on; null when unknown or expired (then deleted). */
export async function sessionOf(ctx: FleetContext, token: string): Promise<Session | null> {
  if (token.length < 16 || token.length > 128) return null;
  const id = tokenId(token);
  const now = ctx.clock.now();
  const row = await webSessionOf(ctx.db, id);
  if (row === undefined) return null;
  if (Number(row.expires_at) <= now) {
    await deleteWebSession(ctx.db, id);
    return null;
  }
  // Sliding expiry, written at most once a minute per session.
  if (Number(row.expires_at) - now < SESSION_IDLE_MS - 60_000) {
    await extendWebSession(ctx.db, id, now + SESSION_IDLE_MS);
  }
  return { id, userId: row.user_id, username: row.username, role: row.role, csrf: row.csrf };
}

export async function logout(ctx: FleetContext, sessionId: string): Promise<void> {
  await deleteWebSession(ctx.db, sessionId);
  await deleteExpiredWebSessions(ctx.db, ctx.clock.now());
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function csrfMatches(submitted: unknown, expected: string): boolean {
  if (typeof submitted !== "string") return false;
  const a = createHash("sha256").update(submitted).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && submitted.length === expected.length;
}
