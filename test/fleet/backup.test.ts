/**
 * `vendd fleet backup --out FILE` (issue 34; docs/fleet-server.md, "Backup and restore"): a consistent copy
 * of the SQLite fleet database taken while `vendd fleet serve` runs and writes, 0600, integrity checked; a
 * server started on the copy (the restore procedure) serves and has the data; an existing --out, or a
 * PostgreSQL database, refused with nothing written.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, vendd } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-fleet-backup-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function serve(db: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [CLI, "fleet", "serve", "--db", db, "--listen", "127.0.0.1:0", "--log-level", "warn"],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("fleet serve did not start")), 30_000);
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

describe("vendd fleet backup", () => {
  it("copies the database while the server serves and writes; the copy restores", {
    timeout: 120_000,
  }, async () => {
    const db = join(dir, "fleet.db");
    const url = await serve(db);
    const password = join(dir, "pw");
    writeFileSync(password, "correct horse battery\n", { mode: 0o600 });
    for (const name of ["ann", "bob"]) {
      const r = await vendd([
        "fleet",
        "user",
        "add",
        name,
        "--role",
        "viewer",
        "--db",
        db,
        "--password-file",
        password,
      ]);
      expect(r.code, r.stderr).toBe(0);
    }
    // The server keeps answering (and writing its own rows) during the copy.
    const load = Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/healthz`).then((r) => r.status)));
    const out = join(dir, "copy.db");
    const r = await vendd(["fleet", "backup", "--db", db, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("integrity ok");
    expect((await load).every((s) => s === 200)).toBe(true);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const copy = new Database(out, { readonly: true });
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      copy.close();
    }
    // Restore: a server on the copy serves, and the copy has the users.
    const restoredUrl = await serve(out);
    expect((await fetch(`${restoredUrl}/healthz`)).status).toBe(200);
    const users = await vendd(["fleet", "user", "list", "--db", out, "--json"]);
    expect(users.stdout).toContain("ann");
    expect(users.stdout).toContain("bob");
  });

  it("refuses an existing --out and a PostgreSQL database, writing nothing", async () => {
    const db = join(dir, "other.db");
    new Database(db).close();
    const out = join(dir, "exists.db");
    writeFileSync(out, "keep");
    const r = await vendd(["fleet", "backup", "--db", db, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("exists: choose a new file");
    const pg = await vendd([
      "fleet",
      "backup",
      "--db",
      "postgres://fleet@127.0.0.1/fleet",
      "--out",
      join(dir, "pg.db"),
    ]);
    expect(pg.code).toBe(2);
    expect(pg.stderr).toContain("pg_dump");
    expect(existsSync(join(dir, "pg.db"))).toBe(false);
  });
});
