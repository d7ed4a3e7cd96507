/**
 * The dashboard accounts' SQL (accounts.ts holds their rules): users, login attempts (the throttle) and
 * server-side sessions, the same Kysely queries on SQLite and PostgreSQL.
 */
import type { Kysely } from "kysely";
import type { FleetDatabase } from "../db/schema.js";

type Db = Kysely<FleetDatabase>;

/** What a dashboard user may do: read (viewer), or also change (manager). */
export type Role = "viewer" | "manager";

export interface UserRow {
  username: string;
  role: Role;
  created_at: number;
}

/** The id of the user named `username`, if any. */
export async function userIdOf(db: Db, username: string) {
  return db.selectFrom("users").select("id").where("username", "=", username).executeTakeFirst();
}

export async function insertUser(
  db: Db,
  u: { username: string; password_hash: string; role: Role; created_at: number },
): Promise<void> {
  await db.insertInto("users").values(u).execute();
}

export async function listUsers(db: Kysely<FleetDatabase>): Promise<UserRow[]> {
  const rows = await db
    .selectFrom("users")
    .select(["username", "role", "created_at"])
    .orderBy("username")
    .execute();
  return rows.map((r) => ({ username: r.username, role: r.role, created_at: Number(r.created_at) }));
}

/** Removes a user and every session of theirs; false when there was no such user. */
export async function removeUser(db: Kysely<FleetDatabase>, username: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const user = await tx
      .selectFrom("users")
      .select("id")
      .where("username", "=", username)
      .executeTakeFirst();
    if (user === undefined) return false;
    await tx.deleteFrom("web_sessions").where("user_id", "=", user.id).execute();
    await tx.deleteFrom("users").where("id", "=", user.id).execute();
    return true;
  });
}

/** The time of the user's last successful login since `since` (a success clears the account's failures). */
export async function lastLoginSince(db: Db, username: string, since: number) {
  return db
    .selectFrom("login_attempts")
    .select((eb) => eb.fn.max("at").as("at"))
    .where("username", "=", username)
    .where("ok", "=", 1)
    .where("at", ">=", since)
    .executeTakeFirst();
}

/** The failed logins since `since` of one account (`username`) or one address (`remote`). */
export async function failedLogins(db: Db, by: "username" | "remote", value: string, since: number) {
  return db
    .selectFrom("login_attempts")
    .select("at")
    .where(by, "=", value)
    .where("ok", "=", 0)
    .where("at", ">=", since)
    .execute();
}

/** Forgets login attempts older than `before`. */
export async function purgeLoginAttempts(db: Db, before: number): Promise<void> {
  await db.deleteFrom("login_attempts").where("at", "<", before).execute();
}

export async function recordLoginAttempt(
  db: Db,
  a: { username: string; remote: string; at: number; ok: 0 | 1 },
): Promise<void> {
  await db.insertInto("login_attempts").values(a).execute();
}

/** What a login checks of the user named `username`, if any. */
export async function userForLogin(db: Db, username: string) {
  return db
    .selectFrom("users")
    .select(["id", "username", "password_hash", "role"])
    .where("username", "=", username)
    .executeTakeFirst();
}

export async function insertWebSession(
  db: Db,
  s: { id: string; user_id: number; csrf: string; created_at: number; expires_at: number },
): Promise<void> {
  await db.insertInto("web_sessions").values(s).execute();
}

/** A session by its id (the token's SHA-256) with its user, if any. */
export async function webSessionOf(db: Db, id: string) {
  return db
    .selectFrom("web_sessions")
    .innerJoin("users", "users.id", "web_sessions.user_id")
    .select([
      "web_sessions.id",
      "web_sessions.csrf",
      "web_sessions.expires_at",
      "users.id as user_id",
      "users.username",
      "users.role",
    ])
    .where("web_sessions.id", "=", id)
    .executeTakeFirst();
}

export async function deleteWebSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom("web_sessions").where("id", "=", id).execute();
}

export async function deleteExpiredWebSessions(db: Db, now: number): Promise<void> {
  await db.deleteFrom("web_sessions").where("expires_at", "<=", now).execute();
}

/** Pushes a session's idle expiry on to `expiresAt`. */
export async function extendWebSession(db: Db, id: string, expiresAt: number): Promise<void> {
  await db.updateTable("web_sessions").set({ expires_at: expiresAt }).where("id", "=", id).execute();
}
