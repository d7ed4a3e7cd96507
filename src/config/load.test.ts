import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { rawV10 } from "./fixtures.test-support.js";
import { ConfigError, loadConfig } from "./load.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** Writes a file in the temp dir and returns its path. */
function file(content: string, name = `f${n++}.yaml`, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

/** The ConfigError `fn` throws. */
function refusal(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("config/example.yaml validates (secret through the environment)", () => {
    const loaded = loadConfig(join(import.meta.dirname, "../../config/example.yaml"), {
      env: { VENDD_V10_CLIENT_SECRET: "x" },
    });
    expect(loaded.config.unit.id).toBe("vm-0001");
    expect(loaded.config.payment.legacy?.posUnitId).toBe("123456789012345");
    expect(loaded.warnings).toEqual([]);
    // issue 42: the dex section is in the example, every key of it shown (commented) with its default
    expect(loaded.config.dex.enabled).toBe(false);
    const text = readFileSync(join(import.meta.dirname, "../../config/example.yaml"), "utf8");
    for (const key of ["enabled", "device", "commId", "schedule", "timeZone", "quietSeconds", "attempts"])
      expect(text).toMatch(new RegExp(`^#?\\s*${key}:`, "m"));
  });

  it("reads JSON, including tab-indented JSON", () => {
    const path = file(JSON.stringify(rawV10(), null, "\t"), "c.json");
    expect(loadConfig(path, { env: { VENDD_V10_CLIENT_SECRET: "x" } }).config.unit.name).toBe("Vending 1");
  });

  it("reports YAML syntax errors with line and column", () => {
    const path = file("unit:\n  id: vm-1\n  name: a: b\n");
    const err = refusal(() => loadConfig(path, { env: {} }));
    expect(err.code).toBe("config_unreadable");
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]?.path).toBe("(config file)");
    expect(err.issues[0]?.message).toMatch(/line 3, column \d+/);
  });

  it("reports an unreadable config file", () => {
    const err = refusal(() => loadConfig(join(dir, "missing.yaml"), { env: {} }));
    expect(err.issues).toEqual([{ path: "(config file)", message: expect.stringContaining("ENOENT") }]);
  });

  it("finds the secrets file by flag, then VENDD_SECRETS_FILE, then secrets.file (relative to the config)", () => {
    mkdirSync(join(dir, "sub"), { recursive: true });
    file(stringify({ v10: { clientSecret: "from-config-path" } }), "sub/secrets.yaml");
    const env = file(stringify({ v10: { clientSecret: "from-env-path" } }));
    const flag = file(stringify({ v10: { clientSecret: "from-flag" } }));
    const config = file(stringify({ ...rawV10(), secrets: { file: "secrets.yaml" } }), "sub/vendd.yaml");
    expect(loadConfig(config, { env: {} }).secrets.v10?.clientSecret).toBe("from-config-path");
    expect(loadConfig(config, { env: { VENDD_SECRETS_FILE: env } }).secrets.v10?.clientSecret).toBe(
      "from-env-path",
    );
    expect(
      loadConfig(config, { secretsFile: flag, env: { VENDD_SECRETS_FILE: env } }).secrets.v10?.clientSecret,
    ).toBe("from-flag");
  });

  it("warns (does not fail) when the secrets file is readable by others", () => {
    const secrets = file(stringify({ v10: { clientSecret: "s3cr3t-value" } }), undefined, 0o644);
    const config = file(stringify(rawV10()));
    const { warnings } = loadConfig(config, { secretsFile: secrets, env: {} });
    expect(warnings).toEqual([expect.stringMatching(/mode 0644; it should be 0600/)]);
    chmodSync(secrets, 0o600);
    expect(loadConfig(config, { secretsFile: secrets, env: {} }).warnings).toEqual([]);
  });

  it("lists a missing secrets file together with the config's own errors", () => {
    const config = file(stringify({ ...rawV10(), board: "toaster" }));
    const err = refusal(() => loadConfig(config, { secretsFile: join(dir, "nope.yaml"), env: {} }));
    expect(err.issues.map((i) => i.path)).toEqual(["secrets.file", "board", "secrets.v10.clientSecret"]);
  });

  it("never shows secrets file content in a syntax error", () => {
    const secrets = file('v10:\n  clientSecret: "canary-unterminated\n');
    const err = refusal(() => loadConfig(file(stringify(rawV10())), { secretsFile: secrets, env: {} }));
    expect(err.issues[0]?.message).toMatch(/syntax error at line \d+, column \d+: [A-Z_]+ \([^)]*\)$/);
    expect(err.message).not.toContain("canary");
  });

  it("warns about an unstable serial device name", () => {
    const config = file(stringify({ ...rawV10(), vmc: { driver: "mdb-adapter", device: "/dev/ttyUSB0" } }));
    const { warnings } = loadConfig(config, { env: { VENDD_V10_CLIENT_SECRET: "x" } });
    expect(warnings).toEqual([expect.stringContaining("/dev/serial/by-id/")]);
  });
});
