/**
 * The fleet config file (src/fleet/config.ts): a good file with its secrets file, the example file, and
 * the specific errors for malformed YAML, unknown keys, bad values, secrets in the main file and missing
 * secrets; no error message carries a secret's value. `vendd fleet serve --config` refuses to start on a
 * broken file (exit 2, the reason on stderr).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../../src/emulator/testing/httpsReceiver.js";
import { defaultFleetConfig, FleetConfigError, loadFleetConfig } from "../../src/fleet/config.js";
import { CLI, vendd } from "../support/cli.js";

const SECRETS = {
  plansCallbackApiKey: "cb-key-0123456789abcdef",
  plansCsrfSecret: "c".repeat(40),
  badgeSalt: "c2FsdC1mb3ItdGVzdHMtb25seQ",
  subscriptionsClientSecret: "sub-secret-value-1",
  invoicesAccessToken: "inv-token-value-1",
  invoicesCallbackSecret: "inv-callback-secret-1",
};

const GOOD = `db: fleet.db
listen: 127.0.0.1:0
timeZone: Europe/Copenhagen
publicUrl: https://fleet.example.com/
trustProxy: true
maxPendingEnrolments: 50
bundleKeys: [keys/release.pub]
secretsFile: secrets.yaml
reporting: {settingsFile: reporting.yaml}
plans:
  userRedirectUrl: https://fleet.example.com/thanks
  countryCode: DK
  subscriptions: {baseUrl: "https://api.example", tokenUrl: "https://api.example/token", clientId: c, providerId: p}
invoices:
  baseUrl: https://api.example
  callbackAuth: basic
  callbackUsername: vendd
schedules: {reconcile: "0 5 * * *", planCycleMinutes: 15, invoiceDay: 3}
`;

describe("fleet config", () => {
  let dir: string;
  const write = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const secretsYaml = (s: Record<string, string>) =>
    Object.entries(s)
      .map(([k, v]) => `${k}: "${v}"`)
      .join("\n");
  const error = (fn: () => unknown): string => {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(FleetConfigError);
      const msg = (e as Error).message;
      for (const v of Object.values(SECRETS)) expect(msg).not.toContain(v);
      return msg;
    }
    throw new Error("no error");
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "vendd-fleet-config-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a good file and its secrets file; relative paths resolve against the file", () => {
    write("secrets.yaml", secretsYaml(SECRETS));
    const cfg = loadFleetConfig(write("good.yaml", GOOD), {});
    expect(cfg.db).toBe(join(dir, "fleet.db"));
    expect(cfg.bundleKeys).toEqual([join(dir, "keys/release.pub")]);
    expect(cfg.reporting).toEqual({ settingsFile: join(dir, "reporting.yaml") });
    expect(cfg.publicUrl).toBe("https://fleet.example.com");
    expect(cfg.trustProxy).toBe(true);
    expect(cfg.maxPendingEnrolments).toBe(50);
    expect(cfg.plans?.callbackApiKey).toBe(SECRETS.plansCallbackApiKey);
    expect(cfg.plans?.subscriptions.clientSecret).toBe(SECRETS.subscriptionsClientSecret);
    expect(cfg.plans?.autoReserve).toBe(false);
    expect(cfg.invoices?.callbackAuth).toEqual({
      kind: "basic",
      username: "vendd",
      password: SECRETS.invoicesCallbackSecret,
    });
    expect(cfg.schedules).toEqual({
      reconcile: "0 5 * * *",
      reconcileDays: 1,
      planCycleMinutes: 15,
      invoiceDay: 3,
      invoiceTime: "06:00",
    });
    expect(cfg.secrets).toEqual(expect.arrayContaining(Object.values(SECRETS)));
  });

  it("takes secrets from the environment when there is no secrets file; the file wins over it", () => {
    const noFile = GOOD.replace("secretsFile: secrets.yaml\n", "");
    const env = {
      VENDD_PLANS_CALLBACK_API_KEY: SECRETS.plansCallbackApiKey,
      VENDD_PLANS_CSRF_SECRET: SECRETS.plansCsrfSecret,
      VENDD_PLANS_BADGE_SALT: SECRETS.badgeSalt,
      VENDD_SUBSCRIPTIONS_CLIENT_SECRET: "from-env",
      VENDD_INVOICES_ACCESS_TOKEN: SECRETS.invoicesAccessToken,
      VENDD_INVOICES_CALLBACK_SECRET: SECRETS.invoicesCallbackSecret,
    };
    expect(loadFleetConfig(write("env.yaml", noFile), env).plans?.subscriptions.clientSecret).toBe(
      "from-env",
    );
    expect(loadFleetConfig(write("good.yaml", GOOD), env).plans?.subscriptions.clientSecret).toBe(
      SECRETS.subscriptionsClientSecret,
    );
  });

  it("an empty file and no file are the defaults; the example file is valid", () => {
    const empty = loadFleetConfig(write("empty.yaml", ""), {});
    expect(empty).toMatchObject({
      trustProxy: false,
      bundleKeys: [],
      schedules: defaultFleetConfig().schedules,
    });
    expect(empty.plans).toBeUndefined();
    expect(empty.maxPendingEnrolments).toBeUndefined();
    write("fleet-secrets.yaml", secretsYaml(SECRETS));
    writeFileSync(
      join(dir, "example.yaml"),
      readFileSync("config/fleet.example.yaml", "utf8").replace(
        "secretsFile: fleet-secrets.yaml",
        `secretsFile: ${join(dir, "fleet-secrets.yaml")}`,
      ),
    );
    const ex = loadFleetConfig(join(dir, "example.yaml"), {});
    expect(ex.plans?.countryCode).toBe("DK");
    expect(ex.tls?.cert).toBe("/etc/vendd/tls/fleet.crt");
  });

  it("names the problem: malformed YAML, unknown keys, bad values, missing or misplaced secrets", () => {
    expect(error(() => loadFleetConfig(join(dir, "missing.yaml"), {}))).toMatch(/missing\.yaml: ENOENT/);
    expect(error(() => loadFleetConfig(write("bad.yaml", "db: [unclosed\n"), {}))).toMatch(
      /bad\.yaml: syntax error at line \d+, column \d+: [A-Z_]+/,
    );
    expect(error(() => loadFleetConfig(write("unknown.yaml", "dbb: x\n"), {}))).toMatch(
      /unknown key\(s\) dbb/,
    );
    expect(error(() => loadFleetConfig(write("pending.yaml", "maxPendingEnrolments: 0\n"), {}))).toMatch(
      /maxPendingEnrolments/,
    );
    expect(error(() => loadFleetConfig(write("tz.yaml", "timeZone: Mars/Base\n"), {}))).toMatch(
      /timeZone: not an IANA time zone/,
    );
    expect(error(() => loadFleetConfig(write("url.yaml", "publicUrl: http://plain.example\n"), {}))).toMatch(
      /publicUrl: must be an https:\/\/ URL/,
    );
    expect(
      error(() => loadFleetConfig(write("cron.yaml", "schedules: {reconcile: 'every night'}\n"), {})),
    ).toMatch(/schedules\.reconcile/);
    // A secret in the main file is refused, naming the key but not the value.
    const leaked = `plans:\n  subscriptions:\n    clientSecret: ${SECRETS.subscriptionsClientSecret}\n`;
    expect(error(() => loadFleetConfig(write("leak.yaml", leaked), {}))).toMatch(
      /plans\.subscriptions\.clientSecret: secrets do not belong in the main file/,
    );
    // Missing secrets: which one, and where it may come from.
    write("partial.yaml", secretsYaml({ ...SECRETS, plansCsrfSecret: "short" }));
    expect(
      error(() => loadFleetConfig(write("p1.yaml", GOOD.replace("secrets.yaml", "partial.yaml")), {})),
    ).toMatch(/plansCsrfSecret: at least 32 characters/);
    const { invoicesAccessToken: _, ...noToken } = SECRETS;
    write("notoken.yaml", secretsYaml(noToken));
    expect(
      error(() => loadFleetConfig(write("p2.yaml", GOOD.replace("secrets.yaml", "notoken.yaml")), {})),
    ).toMatch(
      /invoices needs the secret invoicesAccessToken \(in secretsFile, or \$VENDD_INVOICES_ACCESS_TOKEN\)/,
    );
    expect(
      error(() =>
        loadFleetConfig(write("p3.yaml", GOOD.replace("publicUrl: https://fleet.example.com/\n", "")), {}),
      ),
    ).toMatch(/plans needs publicUrl/);
  });

  it("vendd fleet serve --config serves every section; flags override the file; no secret is printed", async () => {
    write("serve-secrets.yaml", secretsYaml(SECRETS));
    const cfgFile = write(
      "serve.yaml",
      `db: serve.db
listen: 127.0.0.1:1
publicUrl: https://fleet.example.com
secretsFile: serve-secrets.yaml
logLevel: info
plans:
  userRedirectUrl: https://fleet.example.com/thanks
  countryCode: DK
  subscriptions: {baseUrl: "http://127.0.0.1:9", tokenUrl: "http://127.0.0.1:9/token", clientId: c, providerId: p}
invoices: {baseUrl: "http://127.0.0.1:9"}
`,
    );
    const child = spawn(
      process.execPath,
      [CLI, "fleet", "serve", "--config", cfgFile, "--listen", "127.0.0.1:0"],
      {
        env: { ...process.env, VENDD_FAULT_POINT: "", VENDD_FLEET_DB: "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
    const url = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`not serving: ${err}`)), 20_000);
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /serving (http:\/\/\S+)/.exec(out);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          ok(m[1]);
        }
      });
    });
    try {
      expect(out).toContain(join(dir, "serve.db"));
      expect((await fetch(`${url}/login`)).status).toBe(200);
      const plans = await fetch(`${url}/plans`, { redirect: "manual" });
      expect([plans.status, plans.headers.get("location")]).toEqual([303, "/login"]);
      expect((await fetch(`${url}/plans/signup/nope`)).status).toBe(404);
      const cb = await fetch(`${url}/invoices/callbacks`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "wrong" },
        body: "[]",
      });
      expect(cb.status).toBe(401);
      const cbOk = await fetch(`${url}/invoices/callbacks`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: SECRETS.invoicesCallbackSecret },
        body: "[]",
      });
      expect(cbOk.status).toBe(200);
      expect((await fetch(`${url}/api/unit/v1/entitlements`)).status).toBe(401);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    for (const v of Object.values(SECRETS)) {
      expect(out).not.toContain(v);
      expect(err).not.toContain(v);
    }
    // The unreachable services were reported, without secrets.
    expect(err + out).toMatch(/could not set the callback URL/);
    // The admin commands take the database from the file, without needing the secrets.
    const units = await vendd(["fleet", "units", "--config", cfgFile, "--json"], {
      env: { VENDD_FLEET_DB: "" },
    });
    expect(units.code, units.stderr).toBe(0);
    expect(JSON.parse(units.stdout)).toEqual({ units: [] });
  }, 30_000);

  it("tls in the config: serves HTTPS with HSTS (needs the openssl tool for a self-signed cert)", async () => {
    const { cert, key } = selfSignedCertificate();
    writeFileSync(join(dir, "tls.key"), key);
    writeFileSync(join(dir, "tls.crt"), cert);
    const cfgFile = write("tls.yaml", "db: tls.db\ntls: {cert: tls.crt, key: tls.key}\n");
    const child = spawn(
      process.execPath,
      [CLI, "fleet", "serve", "--config", cfgFile, "--listen", "127.0.0.1:0"],
      {
        env: { ...process.env, VENDD_FAULT_POINT: "", VENDD_FLEET_DB: "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
    let out = "";
    const url = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error("not serving")), 20_000);
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /serving (https:\/\/\S+)/.exec(out);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          ok(m[1]);
        }
      });
    });
    const agent = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const r = await undiciFetch(`${url}/login`, { dispatcher: agent });
      expect(r.status).toBe(200);
      expect(r.headers.get("strict-transport-security")).toBe("max-age=31536000");
    } finally {
      child.kill("SIGTERM");
      await agent.close();
    }
    expect(await exited).toBe(0);
  }, 30_000);

  it("vendd fleet serve --config refuses a broken file: exit 2 and the reason", async () => {
    const bad = write("serve-bad.yaml", "listen: 127.0.0.1:0\nplans: {countryCode: SE}\n");
    const r = await vendd(["fleet", "serve", "--config", bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/plans\.countryCode/);
  });
});
