/**
 * `vendd fleet user add|list|remove` (issue 16), through the built command: the password from a file or
 * standard input (never argv), the hash in the database, removal ending the user's sessions.
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openFleetDb } from "../../src/fleet/database.js";
import { verifyPassword } from "../../src/fleet/web/accounts.js";
import { type CliResult, vendd } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-fleet-user-"));
const db = join(dir, "fleet.db");

/** `vendd fleet user add <name> --role <role> --db <db> --password-file <file>`. */
function addUser(name: string, role: string, passwordFile: string): Promise<CliResult> {
  return vendd(["fleet", "user", "add", name, "--role", role, "--db", db, "--password-file", passwordFile]);
}

describe("vendd fleet user", () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("adds, lists and removes accounts; passwords never on the command line", async () => {
    const pw = join(dir, "pw");
    writeFileSync(pw, "correct horse battery\n", { mode: 0o600 });
    // Issue 32: an admin command never creates the database; `vendd fleet init` (or fleet serve) does.
    const early = await addUser("mia", "manager", pw);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`fleet database ${db}: no such file`);
    expect(early.stderr).toContain("vendd fleet init");
    expect(existsSync(db)).toBe(false);
    const init = await vendd(["fleet", "init", "--db", db]);
    expect(init.code, init.stderr).toBe(0);
    expect(statSync(db).mode & 0o777).toBe(0o600);
    const add = await addUser("mia", "manager", pw);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain("user mia added (manager)");
    expect(add.stdout + add.stderr).not.toContain("correct horse");
    const viaStdin = await vendd(["fleet", "user", "add", "vic", "--role", "viewer", "--db", db], {
      input: "viewer-secret-1\n",
    });
    expect(viaStdin.code, viaStdin.stderr).toBe(0);

    const dup = await addUser("mia", "viewer", pw);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("exists already");
    writeFileSync(pw, "short\n");
    const short = await addUser("sam", "viewer", pw);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("at least 10 characters");
    const noRole = await vendd(["fleet", "user", "add", "sam", "--db", db, "--password-file", pw]);
    expect(noRole.code).toBe(2);
    const argvPassword = await vendd(["fleet", "user", "add", "sam", "--role", "viewer", "--password", "x"]);
    expect(argvPassword.code).toBe(2);

    const list = await vendd(["fleet", "user", "list", "--db", db, "--json"]);
    expect(list.code).toBe(0);
    const users = JSON.parse(list.stdout) as { username: string; role: string }[];
    expect(users.map((u) => [u.username, u.role])).toEqual([
      ["mia", "manager"],
      ["vic", "viewer"],
    ]);

    const f = await openFleetDb(db);
    try {
      const rows = await f.db.selectFrom("users").select(["id", "username", "password_hash"]).execute();
      const mia = rows.find((r) => r.username === "mia");
      const vic = rows.find((r) => r.username === "vic");
      expect(await verifyPassword("correct horse battery", mia?.password_hash ?? "")).toBe(true);
      expect(await verifyPassword("viewer-secret-1", vic?.password_hash ?? "")).toBe(true);
      await f.db
        .insertInto("web_sessions")
        .values({
          id: "a".repeat(64),
          user_id: vic?.id ?? 0,
          csrf: "c",
          created_at: 0,
          expires_at: Date.now() + 60_000,
        })
        .execute();
    } finally {
      await f.close();
    }

    const rm = await vendd(["fleet", "user", "remove", "vic", "--db", db]);
    expect(rm.code, rm.stderr).toBe(0);
    const again = await vendd(["fleet", "user", "remove", "vic", "--db", db]);
    expect(again.code).toBe(1);
    const g = await openFleetDb(db);
    try {
      expect(await g.db.selectFrom("web_sessions").selectAll().execute()).toEqual([]);
    } finally {
      await g.close();
    }
    const help = await vendd(["fleet", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--password-file");
  }, 60_000);
});
