import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One request the receiver got. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** JSON.parse of the body, or undefined when it is not JSON. */
  json: unknown;
}

export interface HttpsReceiver {
  /** `https://127.0.0.1:PORT` */
  readonly origin: string;
  readonly port: number;
  /** The self-signed certificate (PEM): the emulator trusts it through its `callbackCa` option. */
  readonly ca: string;
  readonly requests: ReceivedRequest[];
  /** The status answered to each request (default 200); may depend on the request. */
  respondWith(status: number | ((r: ReceivedRequest) => number)): void;
  /** Resolves once `count` requests matching `match` arrived (bounded real wait, default 5 s). */
  waitFor(
    match: (r: ReceivedRequest) => boolean,
    count?: number,
    timeoutMs?: number,
  ): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** True when `openssl` can be run (it is on the dev machine and on Debian CI). */
export function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A self-signed certificate for 127.0.0.1 made with `openssl req -x509` (key and cert PEM). */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "vendd-https-receiver-"));
  try {
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
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    return {
      key: readFileSync(join(dir, "key.pem"), "utf8"),
      cert: readFileSync(join(dir, "cert.pem"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A real HTTPS callback receiver for tests: node:https on 127.0.0.1 (free port) with a self-signed
 * certificate made by `openssl`, recording every request. Callers check `hasOpenssl()` first and skip when
 * it is missing.
 */
export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const { key, cert } = selfSigned();
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  let status: number | ((r: ReceivedRequest) => number) = 200;
  const server: Server = createServer({ key, cert, minVersion: "TLSv1.2" }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const r: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: { ...req.headers },
        body,
        json,
      };
      requests.push(r);
      res.writeHead(typeof status === "number" ? status : status(r));
      res.end();
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    ca: cert,
    requests,
    respondWith(s) {
      status = s;
    },
    waitFor(match, count = 1, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = requests.filter(match);
          if (found.length < count) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `https receiver: ${requests.filter(match).length}/${count} requests in ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
