import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { Clock } from "../../core/clock.js";
import type { PaymentError } from "../errors.js";
import { type LegacyFailure, toPaymentError } from "./errors.js";
import { authorizationHeader } from "./signing.js";

/** A response object whose field names are read case-insensitively (pos-legacy §2). */
export type LegacyBody = ReadonlyMap<string, unknown>;

export interface TransportDeps {
  dispatcher: Dispatcher;
  baseUrl: string;
  apiVersion: string;
  apiKey: string;
  /** Signing time and the request deadline (a timer on this clock). */
  clock: Clock;
  /**
   * Runs the request deadlines (default: \`clock\`). A test that moves \`clock\` by hand while real HTTP is in
   * flight passes the system clock here, so a deadline measures the exchange, not the test's stepping.
   */
  deadlineClock?: Clock;
  /** ms */
  timeoutMs: number;
  logger?: Logger;
}

/** Error codes of a connection that never carried the request. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * Sends one older-interface operation: `POST {base}/API/{version}/{Operation}` with a JSON body and the
 * `Authorization` header computed over the exact string sent (pos-legacy §1, §3). No retries: there are
 * no idempotency keys (§11), so repeating is the driver flow's decision after a status query (retry.ts
 * `decideRepeat`, budget.ts). The deadline is a timer on the injected clock.
 */
export class LegacyTransport {
  private readonly root: string;

  constructor(private readonly deps: TransportDeps) {
    this.root = deps.baseUrl.replace(/\/+$/, "");
  }

  /** Resolves with the `200` body (`{}` for `204`); rejects with a PaymentError (see errors.ts). */
  async call(op: string, fields: Record<string, unknown>, signal?: AbortSignal): Promise<LegacyBody> {
    const r = await this.send(op, fields, signal);
    if ("failure" in r) throw this.fail(op, r.failure);
    return r.body;
  }

  private fail(op: string, f: LegacyFailure): PaymentError {
    const e = toPaymentError(op, f);
    this.deps.logger?.debug({ op, code: e.code, serviceCode: e.details.serviceCode }, "legacy call failed");
    return e;
  }

  private async send(
    op: string,
    fields: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ body: LegacyBody } | { failure: LegacyFailure }> {
    const url = new URL(`${this.root}/API/${this.deps.apiVersion}/${op}`);
    const text = JSON.stringify(fields);
    const ts = Math.floor(this.deps.clock.now() / 1000);
    const headers = {
      "content-type": "application/json",
      authorization: authorizationHeader(this.deps.apiKey, url.href, text, ts),
    };
    if (signal?.aborted) return { failure: { kind: "notSent", detail: "aborted before sending" } };
    const ac = new AbortController();
    let timedOut = false;
    const timer = (this.deps.deadlineClock ?? this.deps.clock).setTimer(this.deps.timeoutMs, () => {
      timedOut = true;
      ac.abort();
    });
    const onAbort = () => ac.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await this.deps.dispatcher.request({
        origin: url.origin,
        path: url.pathname,
        method: "POST",
        headers,
        body: text,
        signal: ac.signal,
        headersTimeout: this.deps.timeoutMs + 1000,
        bodyTimeout: this.deps.timeoutMs + 1000,
      });
      const raw = await res.body.text();
      return readAnswer(res.statusCode, raw);
    } catch (e) {
      if (timedOut)
        return { failure: { kind: "lost", detail: `no answer within ${this.deps.timeoutMs} ms`, cause: e } };
      const code = errorCode(e);
      if (code !== undefined && NOT_SENT.has(code))
        return { failure: { kind: "notSent", detail: code, cause: e } };
      return { failure: { kind: "lost", detail: code ?? "connection failed", cause: e } };
    } finally {
      timer.cancel();
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** pos-legacy §1: 200 with a JSON object (204 tolerated), 400 with `{StatusCode, StatusText}`. */
export function readAnswer(status: number, raw: string): { body: LegacyBody } | { failure: LegacyFailure } {
  if (status === 204) return { body: new Map() };
  const json = parseObject(raw);
  if (status === 200) {
    return json ? { body: json } : { failure: { kind: "lost", detail: "unreadable 200 answer", status } };
  }
  if (status === 400 && json) {
    const statusCode = json.get("statuscode");
    const statusText = json.get("statustext");
    if (typeof statusCode === "number" && Number.isInteger(statusCode)) {
      const text = typeof statusText === "string" ? statusText.slice(0, 200) : "";
      return { failure: { kind: "refused", status: 400, statusCode, statusText: text } };
    }
  }
  if (status >= 500) return { failure: { kind: "lost", detail: `HTTP ${status}`, status } };
  return { failure: { kind: "status", status } };
}

function parseObject(raw: string): LegacyBody | null {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  return new Map(Object.entries(v).map(([k, x]) => [k.toLowerCase(), x]));
}

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; depth < 3 && typeof cur === "object" && cur !== null; depth++) {
    const code = "code" in cur ? cur.code : undefined;
    if (typeof code === "string") return code;
    cur = "cause" in cur ? cur.cause : undefined;
  }
  return undefined;
}
