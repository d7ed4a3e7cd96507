/**
 * A throw-away nginx in front of a fleet server, for test/fleet/tls-proxy.test.ts: a self-signed certificate
 * for 127.0.0.1 (openssl CLI), the shipped example config/nginx-fleet.conf's server block with only its
 * listen address, certificate paths and upstream port replaced, run in the foreground from a temporary
 * prefix (its own pid file, error log and temp directories), on loopback; and an HTTPS client that trusts
 * that certificate.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { connect } from "node:net";
import { delimiter, join } from "node:path";
import { until } from "./wait.js";

export const NGINX_EXAMPLE = "config/nginx-fleet.conf";

/** The nginx binary on PATH (or /usr/sbin, where Debian puts it), or null. */
export function findNginx(): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  for (const d of dirs) {
    if (d === "") continue;
    const p = join(d, "nginx");
    if (existsSync(p)) return p;
  }
  return null;
}

/** A self-signed certificate and key for 127.0.0.1 in `dir`; returns their paths and the PEM. */
export function throwAwayCertificate(dir: string): { cert: string; key: string; pem: string } {
  const cert = join(dir, "fullchain.pem");
  const key = join(dir, "privkey.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
      ...["-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      ...["-keyout", key, "-out", cert],
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  chmodSync(key, 0o600);
  return { cert, key, pem: readFileSync(cert, "utf8") };
}

/** Replaces exactly one occurrence of `pattern` (throws naming it otherwise: the example changed). */
function replaceOnce(text: string, pattern: RegExp, by: string): string {
  const hits = text.match(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`)) ?? [];
  if (hits.length !== 1)
    throw new Error(`${NGINX_EXAMPLE}: expected one ${pattern} in the server block, found ${hits.length}`);
  return text.replace(pattern, by);
}

/**
 * The example's server block for this test: listening on 127.0.0.1:`port` (the IPv6 listen dropped),
 * with the throw-away certificate, proxying to the fleet on `upstreamPort`. Everything else as shipped.
 */
export function templatedServerBlock(
  example: string,
  port: number,
  cert: { cert: string; key: string },
  upstreamPort: number,
): string {
  const start = example.search(/^server \{/m);
  if (start < 0) throw new Error(`${NGINX_EXAMPLE}: no server block`);
  let block = example.slice(start);
  block = replaceOnce(block, /^ {4}listen 443 ssl;$/m, `    listen 127.0.0.1:${port} ssl;`);
  block = replaceOnce(block, /^ {4}listen \[::\]:443 ssl;\n/m, "");
  block = replaceOnce(block, /^( {4}ssl_certificate) +\S+;$/m, `$1 ${cert.cert};`);
  block = replaceOnce(block, /^( {4}ssl_certificate_key) +\S+;$/m, `$1 ${cert.key};`);
  block = replaceOnce(
    block,
    /proxy_pass http:\/\/127\.0\.0\.1:8380;/,
    `proxy_pass http://127.0.0.1:${upstreamPort};`,
  );
  return block;
}

export interface RunningNginx {
  child: ChildProcess;
  errorLog: string;
  stop(): Promise<void>;
}

/** nginx in the foreground with `serverBlock` in a minimal http context under `prefix`, once it accepts. */
export async function startNginx(
  nginx: string,
  prefix: string,
  serverBlock: string,
  port: number,
): Promise<RunningNginx> {
  const temp = join(prefix, "temp");
  mkdirSync(temp, { recursive: true });
  // As root the workers run as nobody: they may buffer large answers under temp/.
  chmodSync(prefix, 0o711);
  chmodSync(temp, 0o777);
  const errorLog = join(prefix, "error.log");
  const conf = join(prefix, "nginx.conf");
  const paths = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `    ${t}_temp_path ${join(temp, t)};`)
    .join("\n");
  writeFileSync(
    conf,
    `worker_processes 1;\nerror_log ${errorLog} info;\nevents { worker_connections 64; }\n` +
      `http {\n    access_log off;\n${paths}\n${serverBlock}\n}\n`,
  );
  const child = spawn(
    nginx,
    ["-e", errorLog, "-p", prefix, "-c", conf, "-g", `daemon off; pid ${join(prefix, "nginx.pid")};`],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const log = () => `${stderr}${existsSync(errorLog) ? readFileSync(errorLog, "utf8").slice(-4000) : ""}`;
  await until(
    `nginx listening on 127.0.0.1:${port}`,
    async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}): ${log()}`);
      return (await accepts(port)) ? true : undefined;
    },
    15_000,
  );
  return {
    child,
    errorLog,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGQUIT");
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      done(true);
    });
    s.once("error", () => done(false));
  });
}

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTPS request to 127.0.0.1:`port` trusting only `ca`; no redirect is followed. */
export function https(
  port: number,
  ca: string,
  method: "GET" | "POST",
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<HttpsAnswer> {
  return new Promise((done, fail) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, ca, headers, agent: false, timeout: 15_000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on("error", fail);
    req.end(body);
  });
}
