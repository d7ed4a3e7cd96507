/**
 * TLS through a reverse proxy (issue 34; docs/fleet-server.md, "TLS"): the shipped nginx example,
 * config/nginx-fleet.conf, run by a real nginx on loopback with a throw-away certificate in front of a real
 * `vendd fleet serve` with `trustProxy: true`. Over HTTPS, as a browser would: the login form posted with the
 * proxy's origin gets a Secure session cookie, a page is seen, a manager's form POST (approving a unit that
 * enrolled through the proxy) succeeds; a POST from a foreign origin is refused, also with a forged
 * X-Forwarded-Host (the proxy replaces it), and a client cannot choose the address the fleet records. Sent
 * straight to a fleet without `trustProxy`, forged forwarded headers do not pass the same-origin check.
 *
 * Needs nginx (Debian: nginx-light, installed by .ci/run). Outside CI a missing nginx skips this file with
 * that reason; in CI (CI=true) it fails.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/postgresServer.js";
import { generateUnitKey, signRequest } from "../../src/core/fleetAuth.js";
import { UNIT_API } from "../../src/core/fleetWire.js";
import { CLI, vendd } from "../support/cli.js";
import {
  findNginx,
  https,
  NGINX_EXAMPLE,
  type RunningNginx,
  startNginx,
  templatedServerBlock,
  throwAwayCertificate,
} from "../support/nginxProxy.js";

const NGINX = findNginx();
const IN_CI = process.env.CI === "true";
const MANAGER = { username: "mia", password: "manager-password-1" };
const FORM = { "content-type": "application/x-www-form-urlencoded" };

it.runIf(NGINX === null && IN_CI)("CI has nginx (apt-get install nginx-light; .ci/run does)", () => {
  expect.fail("nginx is not installed: the TLS proxy example cannot be tested");
});

interface Fleet {
  child: ChildProcess;
  port: number;
}

/** `vendd fleet serve --config FILE` on the shared database, once it prints the URL it serves. */
async function serve(dir: string, name: string, db: string, trustProxy: boolean): Promise<Fleet> {
  const config = join(dir, `${name}.yaml`);
  writeFileSync(config, `db: ${db}\nlisten: 127.0.0.1:0\nlogLevel: warn\ntrustProxy: ${trustProxy}\n`);
  const child = spawn(process.execPath, [CLI, "fleet", "serve", "--config", config], {
    env: { ...process.env, VENDD_FAULT_POINT: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-2000);
  });
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not start: ${err}`)), 30_000);
    child.once("exit", (code) => fail(new Error(`fleet serve exited ${code}: ${err}`)));
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        done(Number(m[1]));
      }
    });
  });
  return { child, port };
}

/** Rows of a read-only query on the fleet's SQLite database (the servers keep running; WAL). */
function query(db: string, sql: string, param: string): unknown[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(sql).all(param);
  } finally {
    d.close();
  }
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

describe.skipIf(NGINX === null)(
  `the fleet behind nginx (${NGINX_EXAMPLE})${NGINX === null ? ": SKIPPED, nginx is not installed" : ""}`,
  () => {
    let dir = "";
    let db = "";
    let ca = "";
    let proxyPort = 0;
    let origin = "";
    let proxy: RunningNginx | null = null;
    let trusted: Fleet | null = null;
    let untrusted: Fleet | null = null;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "vendd-fleet-tls-"));
      db = join(dir, "fleet.db");
      const pw = join(dir, "pw");
      writeFileSync(pw, `${MANAGER.password}\n`, { mode: 0o600 });
      // Admin commands never create a database (issue 32): `fleet init` does.
      const init = await vendd(["fleet", "init", "--db", db]);
      expect(init.code, init.stderr).toBe(0);
      const add = await vendd(
        ["fleet", "user", "add", MANAGER.username, "--role", "manager", "--db", db].concat([
          "--password-file",
          pw,
        ]),
      );
      expect(add.code, add.stderr).toBe(0);
      trusted = await serve(dir, "trusted", db, true);
      untrusted = await serve(dir, "untrusted", db, false);
      const cert = throwAwayCertificate(dir);
      ca = cert.pem;
      proxyPort = await freePort();
      origin = `https://127.0.0.1:${proxyPort}`;
      const block = templatedServerBlock(readFileSync(NGINX_EXAMPLE, "utf8"), proxyPort, cert, trusted.port);
      const prefix = join(dir, "nginx");
      mkdirSync(prefix);
      proxy = await startNginx(NGINX ?? "nginx", prefix, block, proxyPort);
    }, 90_000);

    afterAll(async () => {
      await proxy?.stop();
      await Promise.all(
        [trusted, untrusted].map((f) =>
          f === null || f.child.exitCode !== null
            ? undefined
            : new Promise((done) => {
                f.child.once("exit", done);
                f.child.kill("SIGTERM");
              }),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    });

    const login = (headers: Record<string, string>, user = MANAGER) =>
      https(proxyPort, ca, "POST", "/login", { ...FORM, ...headers }, form(user));

    it("logs a browser in over HTTPS (Secure cookie), shows a page, and a manager's POST succeeds", async () => {
      const page = await https(proxyPort, ca, "GET", "/login");
      expect(page.status).toBe(200);
      expect(page.body).toContain('action="/login"');
      expect(page.headers["strict-transport-security"]).toBe("max-age=31536000");

      // A unit enrols through the proxy (the unit API's signed request passes it unchanged).
      const unitId = "u-behind-proxy";
      const key = generateUnitKey();
      const path = `${UNIT_API}/enroll`;
      const enrol = JSON.stringify({ unitId, label: "proxy test" });
      const signed = signRequest(key, "POST", path, enrol, Date.now());
      const enrolled = await https(
        proxyPort,
        ca,
        "POST",
        path,
        {
          ...signed,
          "content-type": "application/json",
        },
        enrol,
      );
      expect(enrolled.status, enrolled.body).toBe(202);

      const r = await login({ origin, referer: `${origin}/login` });
      expect(r.status, r.body).toBe(303);
      const line = [r.headers["set-cookie"] ?? []].flat()[0] ?? "";
      expect(line).toMatch(/; Secure/);
      expect(line).toMatch(/HttpOnly/);
      const cookie = /^(vendd_session=[^;]+)/.exec(line)?.[1] ?? "";
      expect(cookie).not.toBe("");

      const units = await https(proxyPort, ca, "GET", "/units", { cookie });
      expect(units.status).toBe(200);
      expect(units.body).toContain(unitId);
      const unitUrl = `/units/${encodeURIComponent(unitId)}`;
      const detail = await https(proxyPort, ca, "GET", unitUrl, { cookie });
      const csrf = /name="_csrf" value="([^"]+)"/.exec(detail.body)?.[1] ?? "";
      expect(csrf.length).toBeGreaterThan(20);

      const approve = await https(
        proxyPort,
        ca,
        "POST",
        `${unitUrl}/approve`,
        { ...FORM, cookie, origin },
        form({ _csrf: csrf }),
      );
      expect(approve.status, approve.body).toBe(303);
      expect(approve.headers.location).toBe(unitUrl);
      expect(query(db, "SELECT status, decided_by FROM units WHERE id = ?", unitId)).toEqual([
        { status: "approved", decided_by: MANAGER.username },
      ]);
    });

    it("refuses a POST from another origin, also with a forged X-Forwarded-Host", async () => {
      expect((await login({ origin: "https://evil.example" })).status).toBe(403);
      // The proxy says https: the same host over http is another origin.
      expect((await login({ origin: `http://127.0.0.1:${proxyPort}` })).status).toBe(403);
      // A client's own X-Forwarded-Host is replaced by the host it connected to.
      const forged = await login({
        origin: "https://evil.example",
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "https",
      });
      expect(forged.status).toBe(403);
      expect(forged.body).toContain("did not come from this site");
    });

    it("records the connecting address, not one the client puts in X-Forwarded-For", async () => {
      const user = { username: "nobody-xff", password: "wrong-password-1" };
      const r = await login({ origin, "x-forwarded-for": "203.0.113.7" }, user);
      expect(r.status).toBe(401);
      expect(query(db, "SELECT remote FROM login_attempts WHERE username = ?", user.username)).toEqual([
        { remote: "127.0.0.1" },
      ]);
    });

    it("without trustProxy, forged forwarded headers sent straight to the fleet are ignored", async () => {
      const port = untrusted?.port ?? 0;
      const direct = (o: string) =>
        fetch(`http://127.0.0.1:${port}/login`, {
          method: "POST",
          redirect: "manual",
          headers: {
            ...FORM,
            origin: o,
            "x-forwarded-host": "evil.example",
            "x-forwarded-proto": "https",
            "x-forwarded-for": "203.0.113.7",
          },
          body: form(MANAGER),
        });
      expect((await direct("https://evil.example")).status).toBe(403);
      // Its own Host is this site: the same form from it logs in.
      expect((await direct(`http://127.0.0.1:${port}`)).status).toBe(303);
    });
  },
);
