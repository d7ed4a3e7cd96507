/**
 * Issue 43, a fleet manager's first day: the config the vendd-fleet package installs starts as it is (the
 * built CLI as a process), names the path it is installed at, keeps its database in the package's state
 * directory and listens on loopback; a config with several mistakes names every one of them in one start.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, vendd } from "../support/cli.js";

/** The file scripts/debian.sh installs as /etc/vendd-fleet/fleet.yaml. */
function shippedConfig(): string {
  const script = readFileSync("scripts/debian.sh", "utf8");
  const m = /cp "\$repo\/(config\/\S+)" "\$stage\/etc\/vendd-fleet\/fleet\.yaml"/.exec(script);
  if (m?.[1] === undefined) throw new Error("scripts/debian.sh installs no /etc/vendd-fleet/fleet.yaml");
  return m[1];
}

/** `vendd fleet serve ARGS` until it prints the URL it serves (then SIGTERM) or exits. */
function serveOnce(args: string[], cwd: string) {
  const child = spawn(process.execPath, [CLI, "fleet", "serve", ...args], {
    cwd,
    env: { ...process.env, VENDD_FAULT_POINT: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  return new Promise<{ code: number | null; served: string | null; stdout: string; stderr: string }>(
    (resolve) => {
      let served: string | null = null;
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const m = /serving (http:\/\/\S+)/.exec(stdout);
        if (m?.[1] !== undefined && served === null) {
          served = m[1];
          child.kill("SIGTERM");
        }
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, served, stdout, stderr });
      });
    },
  );
}

describe("the fleet config as the package ships it (issue 43)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-shipped-fleet-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("names its installed path, keeps the database in the package's state directory, listens on loopback, and leaves every optional part commented out", () => {
    const file = shippedConfig();
    const text = readFileSync(file, "utf8");
    const unit = readFileSync("systemd/vendd-fleet.service", "utf8");
    // The header names where it is and the command the unit runs; the unit reads that same file.
    expect(text.split("\n")[0]).toContain("/etc/vendd-fleet/fleet.yaml");
    expect(unit).toMatch(/ExecStart=.* fleet serve --config \/etc\/vendd-fleet\/fleet\.yaml$/m);
    expect(text).not.toMatch(/\/etc\/vendd\/|\/var\/lib\/vendd\//);
    const state = /^StateDirectory=(\S+)$/m.exec(unit)?.[1];
    const keys = text
      .split("\n")
      .filter((l) => /^[a-zA-Z]/.test(l))
      .map((l) => l.split(":")[0]);
    expect(keys).toEqual(["db", "listen"]);
    expect(text).toMatch(new RegExp(`^db: /var/lib/${state}/fleet\\.db$`, "m"));
    expect(text).toMatch(/^listen: 127\.0\.0\.1:\d+$/m);
  });

  it("starts as shipped: only the database and the port moved to a scratch directory, no warning of Fastify", async () => {
    const cfg = join(dir, "fleet.yaml");
    copyFileSync(shippedConfig(), cfg);
    const r = await serveOnce(
      ["--config", cfg, "--db", join(dir, "fleet.db"), "--listen", "127.0.0.1:0", "--log-level", "warn"],
      dir,
    );
    expect(r.stderr).not.toMatch(/problem|needs|ENOENT|Deprecation|FSTDEP/);
    expect(r.served).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(r.code).toBe(0);
  }, 60_000);

  it("a config with several mistakes names all of them in one start, and nothing is served", async () => {
    const cfg = join(dir, "broken.yaml");
    writeFileSync(
      cfg,
      [
        "db: fleet.db",
        "listen: 127.0.0.1:0",
        "timeZone: Mars/Base",
        "dbb: typo",
        "plansCallbackApiKey: aaaaaaaaaaaaaaaaaaaa",
        "tls: { cert: missing.crt, key: missing.key }",
        "bundleKeys: [nokey.pub]",
        "reporting: { settingsFile: noreporting.yaml }",
        "invoices: { baseUrl: https://api.example }",
        "",
      ].join("\n"),
    );
    const r = await serveOnce(["--config", cfg], dir);
    expect(r.served).toBeNull();
    expect(r.code).toBe(2);
    const problems = r.stderr.split("\n").filter((l) => l.startsWith("  - "));
    for (const p of [
      /timeZone: not an IANA time zone/,
      /unknown key\(s\) dbb/,
      /plansCallbackApiKey: secrets do not belong in the main file/,
      /tls\.cert .*missing\.crt: ENOENT/,
      /tls\.key .*missing\.key: ENOENT/,
      /nokey\.pub/,
      /reporting\.settingsFile: .*noreporting\.yaml/,
      /invoices needs the secret invoicesCallbackSecret/,
    ])
      expect(
        problems.some((l) => p.test(l)),
        `${p} in\n${r.stderr}`,
      ).toBe(true);
    expect(r.stderr).toMatch(/8 problems|9 problems|10 problems/);
    expect(r.stderr).not.toContain("aaaaaaaaaaaaaaaaaaaa");
  }, 60_000);

  it("vendd fleet serve --help still works without a config", async () => {
    const r = await vendd(["fleet", "serve", "--help"]);
    expect(r.code).toBe(0);
  });
});
