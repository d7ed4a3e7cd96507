import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Test fixture: a scriptable loopback HTTP server for the faults a full emulator cannot produce on demand
 * (reliability.md §7 rung 4). Listens on 127.0.0.1 port 0 only. Not used by production code.
 */

/** One request as the fake saw it. */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  rawHeaders: string[];
  text: string;
  /** Parsed JSON body, or undefined. */
  json: unknown;
}

/**
 * What to do with a request: answer, or a fault. `reset` destroys the socket with a TCP RST; `lost`
 * starts a 200 answer and destroys it mid-body; `hang` never answers (closed by `close()`).
 */
export type FakeReply = { status: number; body?: unknown } | { fault: "reset" | "lost" | "hang" };

export type FakeHandler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeService {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request received, in order. */
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** Starts the fake; `handler` decides each answer. */
export async function startFakeService(handler: FakeHandler): Promise<FakeService> {
  const requests: FakeRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const fr: FakeRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        text,
        json: parse(text),
      };
      requests.push(fr);
      Promise.resolve(handler(fr)).then(
        (reply) => send(req, res, reply),
        () => send(req, res, { status: 500, body: { code: "2999" } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(req: IncomingMessage, res: ServerResponse, reply: FakeReply): void {
  if ("fault" in reply) {
    if (reply.fault === "reset") req.socket.resetAndDestroy();
    if (reply.fault === "lost") {
      res.writeHead(200, { "content-type": "application/json", "content-length": "200" });
      res.write('{"paymentId":"');
      setImmediate(() => res.destroy());
    }
    return;
  }
  const body = reply.body === undefined ? "" : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

function parse(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The token endpoint path the fixtures use. */
export const FAKE_TOKEN_PATH = "/auth/connect/token";

/** A default token answer: `expires_in` in seconds. */
export function tokenReply(accessToken: string, expiresInS = 3600): FakeReply {
  return { status: 200, body: { access_token: accessToken, expires_in: expiresInS, token_type: "Bearer" } };
}
