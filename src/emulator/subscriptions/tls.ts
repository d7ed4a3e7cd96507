import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { bodyLimitFor } from "../http/limits.js";
import type { EmuRequest, EmuResponse } from "../types.js";
import { DEPRECATED_PREFIX, type SubsRoutes } from "./handler.js";
import type { SubsMerchant } from "./model.js";

/** The TLS listener of the deprecated merchant-based interface (started only when asked). */
export interface DeprecatedTlsOptions {
  /** PEM certificate and key of the listener. */
  cert: string;
  key: string;
  /** PEM client certificates registered with the operator (self-signed: each is its own CA). */
  clientCerts: string[];
  /** Port (default 0: a free one). */
  port?: number;
  /** Largest request body, bytes (default 16 MiB, as the plain listener's payment-request route: limits.ts). */
  bodyLimitBytes?: number;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function send(res: ServerResponse, r: EmuResponse): void {
  const body = r.body === undefined ? "" : JSON.stringify(r.body);
  const head: Record<string, string | number> = { ...r.headers, "content-length": Buffer.byteLength(body) };
  if (body !== "") head["content-type"] = "application/json; charset=utf-8";
  res.writeHead(r.status, head);
  res.end(body);
}

/**
 * Serves `/api/merchants/me/...` over mutual TLS: the client certificate must be one of the registered ones
 * (else 401 without body), and `x-gateway-client-id`/`x-gateway-client-secret` must name a merchant (else
 * 401 without body). The seed shows no status for failed authentication: 401 is the emulator's choice.
 */
export async function startDeprecatedListener(
  opts: DeprecatedTlsOptions,
  host: string,
  merchants: () => Iterable<SubsMerchant>,
  routes: SubsRoutes,
): Promise<{ port: number; close(): Promise<void> }> {
  const limit = opts.bodyLimitBytes ?? bodyLimitFor("POST", "/api/merchants/me/paymentrequests", 0);
  const server = createServer(
    { cert: opts.cert, key: opts.key, requestCert: true, rejectUnauthorized: false, ca: opts.clientCerts },
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= limit) chunks.push(c);
      });
      req.on("end", () => {
        if (size > limit) return send(res, { status: 413 });
        const socket = req.socket as TLSSocket;
        if (!socket.authorized) return send(res, { status: 401 });
        const id = req.headers["x-gateway-client-id"];
        const secret = req.headers["x-gateway-client-secret"];
        const merchant =
          typeof id === "string" && typeof secret === "string"
            ? [...merchants()].find((m) => same(m.gatewayClientId, id) && same(m.gatewayClientSecret, secret))
            : undefined;
        if (merchant === undefined) return send(res, { status: 401 });
        const raw = req.url ?? "/";
        const q = raw.indexOf("?");
        const path = q < 0 ? raw : raw.slice(0, q);
        if (path !== DEPRECATED_PREFIX && !path.startsWith(`${DEPRECATED_PREFIX}/`))
          return send(res, { status: 404 });
        const emuReq: EmuRequest = {
          method: req.method ?? "GET",
          path,
          query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)),
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
          url: `https://${req.headers.host ?? host}${raw}`,
        };
        try {
          send(res, routes.deprecated(emuReq, merchant));
        } catch {
          send(res, { status: 500 });
        }
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
