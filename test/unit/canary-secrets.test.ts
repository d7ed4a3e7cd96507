/**
 * Canary test (reliability.md §5): every secret gets a unique token; the logger, the config errors and the
 * `vendd config` command are exercised with them; no token may appear in any output.
 */
import { randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { configCommand } from "../../src/cli/config.js";
import { runCommand } from "../../src/cli/run.js";
import { rawLegacy, rawV10, setPath } from "../../src/config/fixtures.test-support.js";
import { ConfigError, loadConfig, parseConfig, secretValues } from "../../src/config/load.js";
import { createLogger } from "../../src/core/log.js";
import { SecretRegistry } from "../../src/core/secrets.js";

const CANARY = {
  clientSecret: `canary-cs-${randomUUID()}`,
  apiKey: `canary-ak-${randomUUID()}`,
  // JSON-special characters: the escaped form must be caught too.
  merchantKey: `canary-mk"\\${randomUUID()}`,
  bearer: `canary-bt-${randomUUID()}`,
};
const ALL = Object.values(CANARY);
const ENV = {
  VENDD_V10_CLIENT_SECRET: CANARY.clientSecret,
  VENDD_LEGACY_API_KEY: CANARY.apiKey,
  VENDD_LEGACY_MERCHANT_KEY: CANARY.merchantKey,
};

const dir = mkdtempSync(join(tmpdir(), "vendd-canary-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Everything any part of the test printed or produced. */
const outputs: string[] = [];
const record = (text: unknown) => void outputs.push(typeof text === "string" ? text : String(text));

beforeEach(() => {
  outputs.length = 0;
  // Stray console output counts too.
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, "write").mockImplementation((chunk: unknown) => {
      record(chunk);
      return true;
    });
  }
});

afterEach(() => {
  vi.restoreAllMocks();
  const text = outputs.join("\n");
  expect(outputs.length).toBeGreaterThan(0);
  for (const canary of ALL) {
    expect(text).not.toContain(canary);
    expect(text).not.toContain(JSON.stringify(canary).slice(1, -1));
  }
});

function write(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : stringify(value));
  chmodSync(path, 0o600);
  return path;
}

/** Records the message and issues of the ConfigError `fn` throws. */
function recordRefusal(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    record(err.message);
    record(JSON.stringify(err.issues));
    record(String(err.stack));
    return;
  }
  throw new Error("expected a ConfigError");
}

describe("canary secrets", () => {
  it("never reach a log line", () => {
    const { secrets } = parseConfig(rawLegacy(), undefined, ENV);
    const registry = new SecretRegistry(secretValues(secrets));
    const log = createLogger({ level: "trace", destination: { write: record }, secrets: registry });
    registry.addSecret(CANARY.bearer);
    const child = log.child({ component: "payment" });
    child.info({ secrets }, "loaded secrets");
    child.info({ env: ENV }, `environment ${JSON.stringify(ENV)}`);
    child.debug({
      headers: { Authorization: `Bearer ${CANARY.bearer}` },
      body: `client_secret=${encodeURIComponent(CANARY.clientSecret)}`,
    });
    child.error(
      Object.assign(new Error(`signature with ${CANARY.merchantKey} refused`), {
        config: { headers: { authorization: CANARY.apiKey } },
        cause: new Error(`token ${CANARY.bearer}`),
      }),
    );
    child.warn({
      err: new Error(`key ${CANARY.apiKey}`),
      nested: { deeper: { deepest: { apiKey: CANARY.apiKey } } },
    });
    child.trace("%s and %o", CANARY.clientSecret, { v: CANARY.merchantKey });
  });

  it("never reach a config error", () => {
    const main = rawV10();
    main.unit = { id: CANARY.clientSecret, name: `${CANARY.apiKey}☕` };
    setPath(main, "payment.v10.clientSecret", CANARY.clientSecret);
    setPath(main, "payment.v10.merchantVat", CANARY.apiKey);
    main.engine = { sessionMax: CANARY.merchantKey, flow: CANARY.clientSecret };
    main.journal = { retentionDays: CANARY.apiKey };
    main.display = CANARY.clientSecret;
    main.vmc = [CANARY.merchantKey];
    recordRefusal(() => parseConfig(main, undefined, ENV));
    recordRefusal(() => parseConfig(rawV10(), { v10: { clientSecret: [CANARY.clientSecret] } }, {}));
    recordRefusal(() =>
      parseConfig(rawLegacy(), { legacy: { apiKey: 7, merchantKey: { k: CANARY.merchantKey } } }, {}),
    );
    recordRefusal(() => parseConfig(rawV10(), CANARY.clientSecret, {}));
    recordRefusal(() =>
      parseConfig(rawV10(), { v10: { clientSecret: CANARY.clientSecret }, x: CANARY.apiKey }, {}),
    );
    const broken = write(
      "broken-secrets.yaml",
      `v10:\n  clientSecret: "${CANARY.clientSecret}\n legacy: [${CANARY.apiKey}`,
    );
    recordRefusal(() => loadConfig(write("ok.yaml", rawV10()), { secretsFile: broken, env: {} }));
    recordRefusal(() => loadConfig(write("broken.yaml", `unit: {id: ${CANARY.clientSecret}`), { env: ENV }));
  });

  it("never reach the output of vendd config", async () => {
    const io = { stdout: { write: record }, stderr: { write: record }, env: ENV };
    const secretsFile = write("secrets.yaml", {
      v10: { clientSecret: CANARY.clientSecret },
      legacy: { apiKey: CANARY.apiKey },
    });
    const good = write("good.yaml", rawV10());
    expect(await configCommand(["validate", good, "--secrets", secretsFile], io)).toBe(0);
    expect(await configCommand(["print", good, "--secrets", secretsFile], io)).toBe(0);
    expect(await configCommand(["print", good, "--json"], io)).toBe(0);
    const bad = write("bad.yaml", { ...rawLegacy(), unit: { id: CANARY.apiKey, name: "x" } });
    expect(await configCommand(["validate", bad, "--secrets", secretsFile], { ...io, env: {} })).toBe(1);
    expect(await configCommand(["validate", good, `--secret=${CANARY.clientSecret}`], io)).toBe(2);
    expect(await configCommand([`--x=${CANARY.merchantKey}`], io)).toBe(2);
  });

  it("never reach a syntax error of the config or the secrets file, through vendd config validate and vendd run", async () => {
    const io = { stdout: { write: record }, stderr: { write: record }, env: {} };
    const good = write("good-main.yaml", rawV10());
    const goodSecrets = write("good-secrets.yaml", { v10: { clientSecret: "not-a-canary" } });
    // Each one makes the YAML parser quote the offending token in its own message.
    const configs = [
      write("syntax-1.yaml", `unit:\n  id: vm-1\n  name: |x ${CANARY.clientSecret}\n`),
      write("syntax-2.yaml", `unit: >-${CANARY.apiKey}\n`),
      write("syntax-3.yaml", `unit: !${CANARY.bearer}!x b\n`),
    ];
    const secrets = [
      write("syntax-s1.yaml", `v10:\n  clientSecret: |x ${CANARY.clientSecret}\n`),
      write("syntax-s2.yaml", `legacy: { apiKey: !${CANARY.apiKey}!x b }\n`),
    ];
    const before = outputs.length;
    for (const config of configs) {
      expect(await configCommand(["validate", config, "--secrets", goodSecrets], io)).toBe(1);
      expect(await runCommand(["--config", config, "--secrets", goodSecrets])).toBe(1);
    }
    for (const secret of secrets) {
      expect(await configCommand(["validate", good, "--secrets", secret], io)).toBe(1);
      expect(await runCommand(["--config", good, "--secrets", secret])).toBe(1);
    }
    const said = outputs.slice(before).join("\n");
    expect(said.match(/syntax error at line \d+, column \d+: [A-Z_]+/g)?.length).toBeGreaterThanOrEqual(10);
  });
});
