/**
 * Issue 32, defect 5: each raw message a user met now says what, which path or option, and the next step;
 * usage errors exit 2 listing the valid values; admin commands never create a database; `config print`
 * works without the secrets it never prints. All through the built CLI.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { vendd } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-messages-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { VENDD_V10_CLIENT_SECRET: "messages-test-secret", VENDD_FAULT_POINT: "" };

const config = join(dir, "unit.yaml");
writeFileSync(config, stringify(rawV10()), { mode: 0o600 });

describe("messages name what, where and the next step", () => {
  it("bundle verify of a directory; bundle create --out in a missing directory", async () => {
    const d = join(dir, "a-dir");
    mkdirSync(d);
    const v = await vendd(["bundle", "verify", d, "--config", config], { env });
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`${d} is a directory; give a bundle file`);
    expect(v.stderr).not.toContain("EISDIR");
    const out = join(dir, "missing", "o.vb");
    const c = await vendd(
      [
        "bundle",
        "create",
        "--out",
        out,
        "--config",
        config,
        "--version",
        "1",
        "--targets",
        "u",
        "--expires",
        "2030-01-01",
      ],
      { env },
    );
    expect(c.code).toBe(1);
    expect(c.stderr).toContain(`cannot write ${out}: its directory ${join(dir, "missing")} does not exist`);
    expect(c.stderr).not.toContain(".tmp");
  }, 60_000);

  it("fleet databases: a directory, not a database, a mistyped path (never created)", async () => {
    const notadb = join(dir, "notadb");
    writeFileSync(notadb, "plain text\n");
    const a = await vendd(["fleet", "units", "--db", notadb]);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain(
      `fleet database ${notadb}: not a SQLite database; check the path given by --db`,
    );
    const typo = join(dir, "typo.db");
    const b = await vendd(["fleet", "units", "--db", typo]);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("vendd fleet init");
    expect(existsSync(typo)).toBe(false);
    const c = await vendd(["fleet", "serve", "--listen", "127.0.0.1:0", "--db", "/"]);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("fleet database /: cannot be opened as a file");
  }, 60_000);

  it("--log-level with a wrong level: exit 2 listing the levels", async () => {
    for (const args of [
      ["fleet", "serve", "--log-level", "loud"],
      ["demo", "--log-level", "loud"],
    ]) {
      const r = await vendd(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        "--log-level loud: not a log level; one of fatal, error, warn, info, debug, trace, silent",
      );
    }
  }, 60_000);

  it("reconcile --journal of a file that is no journal says so first, before 'restore from a backup'", async () => {
    const users = join(dir, "users.txt");
    writeFileSync(users, "root:x:0:0:root:/root:/bin/bash\n");
    const settings = join(dir, "reporting.yaml");
    writeFileSync(settings, "baseUrl: http://127.0.0.1:9/r\ntokenUrl: http://127.0.0.1:9/t\nclientId: c\n");
    const r = await vendd(
      [
        "reconcile",
        "--journal",
        users,
        "--from",
        "2026-01-01",
        "--to",
        "2026-01-01",
        "--reporting",
        settings,
      ],
      { env: { VENDD_REPORTING_CLIENT_SECRET: "x", VENDD_REPORTING_REFRESH_TOKEN: "y" } },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not a journal");
    expect(r.stderr).toContain("does not start like an SQLite database");
    expect(r.stderr).toContain("If the path is wrong (another file given as --journal");
  }, 60_000);

  it("config print needs no secrets; config with an unknown action lists the valid ones", async () => {
    const p = await vendd(["config", "print", config]);
    expect(p.code, p.stderr).toBe(0);
    const u = await vendd(["config", "frob", config]);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain("one of validate, print");
  }, 60_000);
});
