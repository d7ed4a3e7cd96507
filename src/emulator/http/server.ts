import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { StatsRecorder } from "../stats.js";
import type { EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import type { FaultHit, FaultSchedule } from "./faults.js";
import { bodyLimitFor } from "./limits.js";

export interface HttpServerDeps {
  /** Asked in order; the first non-null answer is sent; none → `404` without body. */
  handlers: readonly InterfaceHandler[];
  faults: FaultSchedule;
  stats: StatsRecorder;
  /**
   * Larger request bodies are answered `413` code `1099` (pos-v10 §19), except on the batch routes, whose
   * own larger limits are in limits.ts.
   */
  bodyLimitBytes: number;
  /** Told of every request as it arrives and of every answer once sent (a bench's timestamps); optional. */
  observe?: (event: EmuHttpEvent) => void;
}

/** A request's arrival (`answer` absent) or its answer handed to the socket; `at` is `performance.now()`. */
export interface EmuHttpEvent {
  method: string;
  path: string;
  answer?: EmuResponse;
  at: number;
}

export interface EmuHttpServer {
  readonly port: number;
  /** Stops listening and destroys every connection, hung ones included. */
  close(): Promise<void>;
}

/** Paths the fault schedule never touches, so that a test can always reach the admin API. */
const ADMIN_PREFIX = "/_admin";

function errorBody(code: string, message: string, req: IncomingMessage): EmuResponse["body"] {
  const given = req.headers.correlationid;
  return { code, message, correlationId: typeof given === "string" && given !== "" ? given : randomUUID() };
}

function encode(r: EmuResponse): { head: Record<string, string | number>; body: string | Buffer } {
  // A Buffer body is sent as it is (a PDF attachment); `text` as it is (a CSV page); anything else as JSON.
  const body =
    r.text ?? (r.body === undefined ? "" : Buffer.isBuffer(r.body) ? r.body : JSON.stringify(r.body));
  const head: Record<string, string | number> = { ...r.headers, "content-length": Buffer.byteLength(body) };
  if (body !== "" && head["content-type"] === undefined)
    head["content-type"] = "application/json; charset=utf-8";
  return { head, body };
}

function send(res: ServerResponse, r: EmuResponse): void {
  if (res.destroyed) return;
  const { head, body } = encode(r);
  res.writeHead(r.status, head);
  res.end(body);
}

/** Sends the head and the first half of the body, then destroys the socket (fault `lost`). */
function sendLost(res: ServerResponse, r: EmuResponse): void {
  const { head, body } = encode(r);
  const bytes = Buffer.from(body.length > 1 ? body : "{}");
  head["content-length"] = bytes.length;
  res.writeHead(r.status, head);
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.destroy());
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > limit) {
      req.resume();
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on("end", () =>
      resolve(over ? null : chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks)),
    );
    req.on("error", reject);
  });
}

async function dispatch(handlers: readonly InterfaceHandler[], req: EmuRequest): Promise<EmuResponse> {
  for (const h of handlers) {
    const r = await h.handle(req);
    if (r) return r;
  }
  return { status: 404 };
}

/** Answers a fault that replaces the handler's answer (409, or a 500/reset/lost not applied); true if it did. */
function answeredByFault(
  req: IncomingMessage,
  res: ServerResponse,
  hit: FaultHit | null,
  fail500: EmuResponse,
): boolean {
  if (hit && (hit.fault === "409" || !hit.applied) && hit.fault !== "delay") {
    if (hit.fault === "409") send(res, { status: 409, body: errorBody(hit.code, "injected conflict", req) });
    else if (hit.fault === "500") send(res, fail500);
    else if (hit.fault === "reset") req.socket.resetAndDestroy();
    else if (hit.fault === "lost") sendLost(res, fail500);
    return true;
  }
  return false;
}

/** A `delay` fault: the handler's `hold()` waits `delayMs` (once per request), on a timer close() clears. */
function holdFor(emuReq: EmuRequest, delayMs: number, timers: Set<NodeJS.Timeout>): void {
  let held: Promise<void> | undefined;
  emuReq.hold = () => {
    held ??= new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, delayMs);
      timers.add(t);
    });
    return held;
  };
}

/** Sends the handler's answer, or what an applied fault makes of it; true when the answer went out whole. */
function sendAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  hit: FaultHit | null,
  answer: EmuResponse,
  fail500: EmuResponse,
): boolean {
  switch (hit?.fault) {
    case "500":
      send(res, fail500);
      return false;
    case "reset":
      req.socket.resetAndDestroy();
      return false;
    case "lost":
      sendLost(res, answer);
      return false;
    case "hang":
      return false;
    default:
      send(res, answer);
      return true;
  }
}

/**
 * The emulator's one HTTP server (plain node:http, no framework, for the polling hot path): reads the body
 * within the limit, applies the fault schedule to every non-admin route (so faults reach both interfaces),
 * and asks the interface handlers in turn.
 */
export async function startHttpServer(
  deps: HttpServerDeps,
  host: string,
  port: number,
): Promise<EmuHttpServer> {
  const timers = new Set<NodeJS.Timeout>();

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const raw = req.url ?? "/";
    const q = raw.indexOf("?");
    const path = q < 0 ? raw : raw.slice(0, q);
    deps.observe?.({ method, path, at: performance.now() });
    deps.stats.request(method, path);
    const limit = bodyLimitFor(method, path, deps.bodyLimitBytes);
    const body = await readBody(req, limit);
    if (body === null) {
      send(res, {
        status: 413,
        headers: { connection: "close" },
        body: errorBody("1099", `request body larger than ${limit} bytes`, req),
      });
      return;
    }
    const hit: FaultHit | null = path.startsWith(ADMIN_PREFIX) ? null : deps.faults.take(method, path);
    if (hit) deps.stats.fault(hit.fault);
    const fail500: EmuResponse = { status: 500, body: errorBody("2001", "injected internal error", req) };
    if (answeredByFault(req, res, hit, fail500)) return;
    const emuReq: EmuRequest = {
      method,
      path,
      query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)),
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
      url: `http://${req.headers.host ?? host}${raw}`,
    };
    if (hit?.fault === "delay") holdFor(emuReq, hit.delayMs, timers);
    let answer: EmuResponse;
    try {
      answer = await dispatch(deps.handlers, emuReq);
    } catch (e: unknown) {
      answer = {
        status: 500,
        body: errorBody("2000", e instanceof Error ? e.message : "internal error", req),
      };
    }
    if (emuReq.hold) await emuReq.hold();
    if (sendAnswer(req, res, hit, answer, fail500))
      deps.observe?.({ method, path, answer, at: performance.now() });
  }

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) send(res, { status: 500 });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
