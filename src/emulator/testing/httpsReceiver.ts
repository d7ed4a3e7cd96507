import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A PEM key pair with its self-signed certificate. */
export interface SelfSigned {
  /** PEM certificate: the CA to trust, and the server's (or client's) certificate. */
  cert: string;
  /** PEM private key. */
  key: string;
}

/** True when the `openssl` binary can be run (it makes the test certificates); tests skip otherwise. */
export function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const cache = new Map<string, SelfSigned>();

/**
 * Makes (once per process and common name) a self-signed EC P-256 certificate for `127.0.0.1`/`localhost`,
 * valid 2 days, usable for TLS server and client authentication, with `openssl req -x509` in a temporary
 * directory that is removed afterwards. Throws when `openssl` is missing (check `hasOpenssl()` first).
 */
export function selfSignedCertificate(commonName = "127.0.0.1"): SelfSigned {
  const known = cache.get(commonName);
  if (known) return known;
  const dir = mkdtempSync(join(tmpdir(), "vendd-cert-"));
  try {
    const keyPath = join(dir, "key.pem");
    const certPath = join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        keyPath,
        "-out",
        certPath,
        "-days",
        "2",
        "-subj",
        `/CN=${commonName}`,
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-addext",
        "extendedKeyUsage=serverAuth,clientAuth",
      ],
      { stdio: "ignore" },
    );
    const made = { cert: readFileSync(certPath, "utf8"), key: readFileSync(keyPath, "utf8") };
    cache.set(commonName, made);
    return made;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One request the receiver got. */
export interface ReceivedRequest {
  method: string;
  /** Path with the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  json: unknown;
  /** The status the receiver answered. */
  status: number;
}

export interface HttpsReceiver {
  /** `https://127.0.0.1:PORT` (no trailing slash); append any path. */
  readonly url: string;
  readonly port: number;
  /** The PEM certificate to trust (the emulator's `callbackCa`). */
  readonly ca: string;
  /** Every request so far, in arrival order. */
  readonly received: readonly ReceivedRequest[];
  /**
   * The status of the next answers: a number, or a function of the request (e.g. fail the first two
   * attempts). Default 200.
   */
  respondWith(status: number | ((req: Omit<ReceivedRequest, "status">, index: number) => number)): void;
  /** Resolves with the first request (already received or arriving) that matches, or rejects after timeoutMs. */
  waitFor(match: (req: ReceivedRequest) => boolean, timeoutMs?: number): Promise<ReceivedRequest>;
  /** Resolves when at least `count` requests matching have arrived (all of them), or rejects after timeoutMs. */
  waitForCount(
    count: number,
    match?: (req: ReceivedRequest) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * A real HTTPS server on 127.0.0.1 (port 0) with a self-signed certificate, for the emulator's callbacks in
 * tests: it records every request (method, path, headers, body) and answers with a configurable status.
 * The emulator trusts it through `callbackCa: receiver.ca`.
 */
export async function startHttpsReceiver(options: { status?: number } = {}): Promise<HttpsReceiver> {
  const { cert, key } = selfSignedCertificate();
  const received: ReceivedRequest[] = [];
  let answer: number | ((req: Omit<ReceivedRequest, "status">, index: number) => number) =
    options.status ?? 200;
  const waiters = new Set<() => void>();

  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = body === "" ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const base = { method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers, body, json };
      const status = typeof answer === "number" ? answer : answer(base, received.length);
      received.push({ ...base, status });
      res.writeHead(status, { "content-type": "application/json" });
      res.end("{}");
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  function waitUntil<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const now = check();
      if (now !== undefined) {
        resolve(now);
        return;
      }
      const onArrival = (): void => {
        const got = check();
        if (got === undefined) return;
        clearTimeout(timer);
        waiters.delete(onArrival);
        resolve(got);
      };
      const timer = setTimeout(() => {
        waiters.delete(onArrival);
        reject(
          new Error(
            `https receiver: ${what} not received within ${timeoutMs} ms (${received.length} received)`,
          ),
        );
      }, timeoutMs);
      waiters.add(onArrival);
    });
  }

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    ca: cert,
    received,
    respondWith(status) {
      answer = status;
    },
    waitFor(match, timeoutMs = 5000) {
      return waitUntil(() => received.find(match), timeoutMs, "a matching request");
    },
    waitForCount(count, match = () => true, timeoutMs = 5000) {
      return waitUntil(
        () => {
          const hits = received.filter(match);
          return hits.length >= count ? hits : undefined;
        },
        timeoutMs,
        `${count} matching requests`,
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const w of [...waiters]) waiters.delete(w);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
