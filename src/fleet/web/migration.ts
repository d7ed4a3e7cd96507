/** The dashboard's accounts (web/accounts.ts): users, their sessions and login attempts, created by `0001_fleet`. */
import type { Kysely } from "kysely";
import { type FleetDialect, serialType } from "../db/migrator.js";

/** Migration `0001_fleet`: users, web sessions, login attempts. */
export async function accountsTables(db: Kysely<unknown>, dialect: FleetDialect): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", serialType(dialect), (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull().unique())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("web_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "integer", (c) => c.notNull().references("users.id"))
    .addColumn("csrf", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("login_attempts")
    .addColumn("id", serialType(dialect), (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull())
    .addColumn("remote", "text", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("ok", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("login_attempts_user")
    .on("login_attempts")
    .columns(["username", "at"])
    .execute();
}
