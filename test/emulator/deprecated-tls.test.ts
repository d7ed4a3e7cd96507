import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

/**
 * Issue 29 defect 4: `vendd emulator --deprecated-tls DIR` starts the deprecated subscriptions interface's
 * mutual-TLS listener with a throw-away CA, server and client certificate made into DIR, and prints their
 * paths and the listener's base URL in the --json line. Checked from outside with curl (the README's call):
 * the server certificate verifies against the CA, the client certificate is accepted, and a call without it
 * is refused.
 */

const run = promisify(execFile);

interface Certificates {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}
interface Deprecated {
  baseUrl: string | null;
  gatewayClientId: string;
  gatewayClientSecret: string;
  certificates: Certificates;
}

let child: ChildProcess | undefined;
let dir = "";
let deprecated: Deprecated;
let plain = "";

function firstLine(c: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    c.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    c.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    c.on("exit", (code) => reject(new Error(`emulator exited ${code}: ${err}`)));
  });
}

/** curl against the listener with the gateway headers; resolves [HTTP status, body]. */
async function curl(path: string, tls: string[], extra: string[] = []): Promise<[number, string]> {
  const url = `${deprecated.baseUrl}${path}${path.includes("?") ? "&" : "?"}api-version=1.1`;
  const { stdout } = await run("curl", [
    "-sS",
    "--max-time",
    "20",
    ...tls,
    "-H",
    `x-gateway-client-id: ${deprecated.gatewayClientId}`,
    "-H",
    `x-gateway-client-secret: ${deprecated.gatewayClientSecret}`,
    "-w",
    "\n%{http_code}",
    ...extra,
    url,
  ]);
  const nl = stdout.lastIndexOf("\n");
  return [Number(stdout.slice(nl + 1)), stdout.slice(0, nl)];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "vendd-deptls-"));
  child = spawn(process.execPath, [CLI, "emulator", "--json", "--deprecated-tls", join(dir, "pki")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const info = JSON.parse(await firstLine(child)) as {
    v10: { baseUrl: string };
    subscriptions: { deprecated: Deprecated };
  };
  deprecated = info.subscriptions.deprecated;
  plain = info.v10.baseUrl;
}, 60_000);

afterAll(async () => {
  if (child?.exitCode === null) {
    const exited = new Promise((r) => child?.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

describe("vendd emulator --deprecated-tls (issue 29, defect 4)", () => {
  it("prints the listener's base URL and the certificate paths; keys and certificates are 0600", async () => {
    expect(deprecated.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const c = deprecated.certificates;
    expect(c.dir).toBe(join(dir, "pki"));
    for (const [name, file] of Object.entries(c)) {
      if (name === "dir") continue;
      expect(file.startsWith(`${c.dir}/`), name).toBe(true);
      expect((await stat(file)).mode & 0o777, name).toBe(0o600);
    }
    expect((await stat(join(c.dir, "ca-key.pem"))).mode & 0o777).toBe(0o600);
    expect((await stat(c.dir)).mode & 0o777).toBe(0o700);
  });

  it("curl with the client certificate is served; the server certificate verifies against the CA", async () => {
    const c = deprecated.certificates;
    const tls = ["--cacert", c.ca, "--cert", c.clientCert, "--key", c.clientKey];
    const [status, body] = await curl("/api/merchants/me/agreements", tls);
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual([]);
    // A real call: an agreement made over mutual TLS.
    const agreement = join(dir, "agreement.json");
    await writeFile(
      agreement,
      JSON.stringify({
        currency: "DKK",
        country_code: "DK",
        plan: "Coffee",
        amount: "99.00",
        expiration_timeout_minutes: 60,
        external_id: "agr-cli",
        links: [
          { rel: "user-redirect", href: "https://merchant.example/r" },
          { rel: "success-callback", href: "https://merchant.example/ok" },
          { rel: "cancel-callback", href: "https://merchant.example/cancel" },
        ],
      }),
    );
    const [created, made] = await curl("/api/merchants/me/agreements", tls, [
      "-H",
      "Content-Type: application/json",
      "-X",
      "POST",
      "-d",
      `@${agreement}`,
    ]);
    expect(created, made).toBe(201);
  });

  it("without the client certificate the call is refused (401); the plain listener refuses the path too", async () => {
    const [status] = await curl("/api/merchants/me/agreements", ["--cacert", deprecated.certificates.ca]);
    expect(status).toBe(401);
    const { stdout } = await run("curl", [
      "-sS",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      `${plain}/api/merchants/me/agreements`,
    ]);
    expect(stdout).toBe("401");
  });

  it("a bad directory is a clear error and a non-zero exit", async () => {
    const file = join(dir, "not-a-dir");
    await writeFile(file, "x");
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, [CLI, "emulator", "--json", "--deprecated-tls", file], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      c.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      c.on("exit", (exit) => resolve({ code: exit, stderr: err }));
    });
    expect(code).not.toBe(0);
    expect(stderr).toContain(`--deprecated-tls ${file}: ${file} is not a directory`);
  });
});
