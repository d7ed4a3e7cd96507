/**
 * Canary test through the real CLI (issue 32, defect 3): every command that reads a secrets file or a URL,
 * as a real process. A secrets file holding another program's lines (a password file given by mistake) or
 * a secret pasted on a line of its own, and a URL with user info, must never come back in any output:
 * unknown keys of a secrets file are counted and located by line, URLs are printed without user info.
 */
import { randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { vendd } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-canary-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : stringify(value));
  chmodSync(path, 0o600);
  return path;
}

describe("canary secrets through every command that reads a secrets file or a URL", () => {
  const token = `canary-cli-${randomUUID()}`;
  const said: string[] = [];
  const cli = async (args: string[]) => {
    const r = await vendd(args, { env: { VENDD_FAULT_POINT: "" }, timeoutMs: 30_000 });
    said.push(r.stdout, r.stderr);
    return r;
  };
  // Another program's lines (user:hash:...), a key that is a secret, and a secret alone on a line.
  const hostile = [
    `root:${token}:19000:0:99999:7:::`,
    `${token}-key: value`,
    `daemon: ${token}-value`,
    `${token}-alone`,
  ].join("\n");
  const asMapping = `${token}-a: 1\n${token}-b: 2\nv10: {clientSecret: ok-secret, ${token}-c: 3}\n`;

  afterEach(() => {
    const text = said.join("\n");
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(token);
    said.length = 0;
  });

  it("vendd config validate/print and vendd run with a hostile secrets file", async () => {
    const main = write("cli-main.yaml", rawV10());
    for (const body of [hostile, asMapping]) {
      const secrets = write(`cli-secrets-${said.length}.yaml`, body);
      const v = await cli(["config", "validate", main, "--secrets", secrets]);
      expect(v.code).toBe(1);
      expect((await cli(["run", "--config", main, "--secrets", secrets])).code).toBe(1);
      expect((await cli(["config", "print", main, "--secrets", secrets])).code).toBe(1);
    }
    const counted = said.join("\n");
    expect(counted).toMatch(/secrets: 2 unknown keys \(lines 1, 2\)/);
    expect(counted).toMatch(/syntax error at line 4, column 1/);
    expect(counted).toMatch(/secrets\.v10: 1 unknown key \(line 3\)/);
  }, 90_000);

  it("vendd fleet serve with a hostile fleet secrets file, and a PostgreSQL URL with a password", async () => {
    const secrets = write("cli-fleet-secrets.yaml", asMapping.replace(/v10: .*\n/, ""));
    const config = write("cli-fleet.yaml", `listen: 127.0.0.1:0\nsecretsFile: ${secrets}\n`);
    const r = await cli(["fleet", "serve", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/2 unknown keys \(lines 1, 2\)/);
    const url = `postgres://fleet:${token}@127.0.0.1:1/fleet`;
    expect((await cli(["fleet", "serve", "--listen", "127.0.0.1:0", "--db", url])).code).toBe(1);
    expect((await cli(["fleet", "units", "--db", url])).code).toBe(1);
    expect((await cli(["fleet", "user", "list", "--db", url])).code).toBe(1);
  }, 90_000);

  it("vendd reconcile and vendd fleet reconcile with a hostile reporting secrets file", async () => {
    const secrets = write("cli-reporting-secrets.yaml", hostile.split("\n").slice(1, 3).join("\n"));
    const settings = write("cli-reporting.yaml", {
      baseUrl: "http://127.0.0.1:9/r",
      tokenUrl: "http://127.0.0.1:9/t",
      clientId: "c",
      secretsFile: secrets,
    });
    const dates = ["--from", "2026-01-01", "--to", "2026-01-01", "--reporting", settings];
    const unit = await cli(["reconcile", "--journal", join(dir, "no-journal.db"), ...dates]);
    expect(unit.code).not.toBe(0);
    const fleetDb = join(dir, "cli-fleet.db");
    expect((await cli(["fleet", "init", "--db", fleetDb])).code).toBe(0);
    const fleet = await cli(["fleet", "reconcile", "--db", fleetDb, ...dates]);
    expect(fleet.code).not.toBe(0);
    expect(fleet.stderr).toMatch(/2 unknown keys \(lines 1, 2\)/);
  }, 90_000);

  it("vendd fleet enroll and vendd config print: URLs without their user info", async () => {
    const main = rawV10();
    main.fleet = { url: `http://enrol:${token}@127.0.0.1:9/` };
    const config = write("cli-enroll.yaml", main);
    const secrets = write("cli-enroll-secrets.yaml", { v10: { clientSecret: "ok-secret" } });
    const key = join(dir, "cli-fleet.key");
    const url = `http://manager:${token}@127.0.0.1:9/`;
    const e = await cli(["fleet", "enroll", "--config", config, "--key", key, "--url", url]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("http://127.0.0.1:9/");
    const j = await cli(["fleet", "enroll", "--config", config, "--key", key, "--url", "nope://x", "--json"]);
    expect(j.code).toBe(1);
    const p = await cli(["config", "print", config, "--secrets", secrets]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain("url: http://127.0.0.1:9/");
  }, 90_000);
});
