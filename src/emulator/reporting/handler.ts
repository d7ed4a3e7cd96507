import { hasDayShape } from "../../core/days.js";
import { lowerBound } from "../ledger.js";
import type { EmuRequest, EmuResponse } from "../types.js";
import type { Grant, MerchantAuth } from "./auth.js";
import type { ReportingBooks } from "./books.js";
import { decimal, isoDate, PAGE_SIZE, type PaymentPoint, type Transfer, type Tx } from "./model.js";
import type { PageTokens } from "./pagetoken.js";
import { pageJson, transferCsv, transferHeadV2, txJson, txJsonV2 } from "./views.js";

/** Path prefix of the reporting interface (seed 002 "Endpoints / Reporting"). */
export const REPORTING_BASE = "/transaction-reporting/api/merchant";

/** A refused reporting request: status, OAuth-style error code and an English message for developers. */
export class ReportingError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function fail(status: number, code: string, message: string): never {
  throw new ReportingError(status, code, message);
}

export function errorAnswer(e: ReportingError): EmuResponse {
  const headers: Record<string, string> = {};
  if (e.status === 401 && e.code === "invalid_token")
    headers["www-authenticate"] = 'Bearer error="invalid_token"';
  return { status: e.status, headers, body: { error: e.code, error_description: e.message } };
}

export interface ReportingDeps {
  books: ReportingBooks;
  auth: MerchantAuth;
  tokens: PageTokens;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

function one(req: EmuRequest, name: string, required: boolean): string | null {
  const all = req.query.getAll(name);
  if (all.length > 1) fail(400, "invalid_request", `${name} is given more than once`);
  const v = all[0];
  if (v === undefined || v === "") {
    if (required) fail(400, "invalid_request", `query parameter ${name} is required`);
    return null;
  }
  return v;
}

function dateTime(req: EmuRequest, name: string): number {
  const v = one(req, name, true) as string;
  const ms = DATE_TIME.test(v) ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(ms))
    fail(400, "invalid_request", `${name} must be a date-time such as 2026-11-24T00:00:00Z`);
  return ms;
}

function date(req: EmuRequest, name: string): string {
  const v = one(req, name, true) as string;
  const ms = hasDayShape(v) ? Date.parse(`${v}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(ms) || isoDate(ms) !== v)
    fail(400, "invalid_request", `${name} must be a date YYYY-MM-DD`);
  return v;
}

/** The three required headers (seed 002): the gateway client pair, then a bearer token of that client. */
function authorize(d: ReportingDeps, req: EmuRequest): Grant {
  const id = req.headers["x-gateway-client-id"];
  const secret = req.headers["x-gateway-client-secret"];
  if (typeof id !== "string" || typeof secret !== "string" || d.auth.client(id, secret) === null)
    fail(401, "invalid_client", "x-gateway-client-id and x-gateway-client-secret must name a known client");
  const auth = req.headers.authorization;
  if (typeof auth !== "string" || !auth.startsWith("Bearer "))
    fail(401, "invalid_token", "Authorization: Bearer <access token> is required");
  const grant = d.auth.verify(auth.slice(7).trim());
  if (grant === null)
    fail(401, "invalid_token", "the access token is unknown or expired; use the refresh token");
  if (grant.clientId !== id) fail(401, "invalid_token", "the access token was issued to another client");
  return grant;
}

function pointOf(d: ReportingDeps, grant: Grant, id: string): PaymentPoint {
  const p = d.books.points.get(id);
  if (p === undefined || p.merchant.merchantId !== grant.merchantId)
    fail(404, "not_found", "no such payment point for this merchant");
  return p;
}

/** The page [offset, offset + 1000) of [start, end) and the token of the next one. */
function page(
  d: ReportingDeps,
  req: EmuRequest,
  query: string,
  start: number,
  end: number,
): { from: number; to: number; next: string | null } {
  const given = one(req, "pageToken", false);
  let from = start;
  if (given !== null) {
    const offset = d.tokens.decode(query, given);
    if (offset === null || offset < start || offset > end)
      fail(400, "invalid_request", "pageToken is not one of this query's tokens (was it URL-encoded?)");
    from = offset;
  }
  const to = Math.min(end, from + PAGE_SIZE);
  return { from, to, next: to < end ? d.tokens.encode(query, to) : null };
}

function json(text: string): EmuResponse {
  return { status: 200, headers: { "content-type": "application/json; charset=utf-8" }, text };
}

function transferOf(point: PaymentPoint, ref: string): Transfer {
  const t = point.transfers.find((x) => x.transferReference === ref);
  if (t === undefined) fail(404, "not_found", "no such transfer for this payment point");
  return t;
}

function accepts(req: EmuRequest): "json" | "csv" {
  const accept = req.headers.accept;
  if (accept === undefined || accept.trim() === "") return "json";
  for (const part of accept.split(",")) {
    const type = part.split(";")[0]?.trim().toLowerCase() ?? "";
    if (type === "application/json" || type === "application/*" || type === "*/*") return "json";
    if (type === "text/csv" || type === "text/*") return "csv";
  }
  fail(406, "not_acceptable", "Accept must be application/json or text/csv");
}

type Route = (d: ReportingDeps, req: EmuRequest, grant: Grant, parts: string[]) => EmuResponse;

function listPoints(d: ReportingDeps, _req: EmuRequest, grant: Grant): EmuResponse {
  const m = d.books.merchants.get(grant.merchantId);
  const points = [...d.books.points.values()].filter((p) => p.merchant.merchantId === grant.merchantId);
  return {
    status: 200,
    body: {
      merchantId: grant.merchantId,
      merchantName: m?.merchantName ?? grant.merchantId,
      paymentPoints: points.map((p) => ({
        paymentPointId: p.paymentPointId,
        paymentPointName: p.paymentPointName,
      })),
    },
  };
}

function head(p: PaymentPoint): Record<string, string> {
  return {
    merchantId: p.merchant.merchantId,
    merchantName: p.merchant.merchantName,
    paymentPointId: p.paymentPointId,
    paymentPointName: p.paymentPointName,
    receiverAccount: p.merchant.receiverAccount,
  };
}

function transactions(d: ReportingDeps, req: EmuRequest, grant: Grant, parts: string[]): EmuResponse {
  const p = pointOf(d, grant, parts[0] ?? "");
  const from = dateTime(req, "from");
  const to = dateTime(req, "to");
  if (to <= from) fail(400, "invalid_request", "to must be after from");
  const key = (t: Tx): number => t.at;
  const start = lowerBound(p.txs, from, key);
  const end = lowerBound(p.txs, to, key);
  const pg = page(d, req, `tx|${p.paymentPointId}|${from}|${to}`, start, end);
  const list: string[] = [];
  for (let i = pg.from; i < pg.to; i++) list.push(txJson(p.txs[i] as Tx, true));
  return json(pageJson(head(p), list, pg.next));
}

function transferReferences(d: ReportingDeps, req: EmuRequest, grant: Grant, parts: string[]): EmuResponse {
  const p = pointOf(d, grant, parts[0] ?? "");
  const from = date(req, "from");
  const to = date(req, "to");
  if (to < from) fail(400, "invalid_request", "to must not be before from");
  const refs = p.transfers
    .filter((t) => t.transferReferenceDate >= from && t.transferReferenceDate <= to)
    .map((t) => ({
      transferReference: t.transferReference,
      transferReferenceDate: t.transferReferenceDate,
      totalTransferredAmount: decimal(t.amount),
      currencyCode: t.currency,
    }));
  return { status: 200, body: { transferReferences: refs } };
}

function transferContents(version: 1 | 2): Route {
  return (d, req, grant, parts) => {
    const p = pointOf(d, grant, parts[0] ?? "");
    const t = transferOf(p, parts[2] ?? "");
    const format = version === 2 ? accepts(req) : "json";
    const pg = page(d, req, `tf|${p.paymentPointId}|${t.transferReference}`, 0, t.txs.length);
    const slice = t.txs.slice(pg.from, pg.to);
    if (format === "csv") {
      const headers: Record<string, string> = { "content-type": "text/csv; charset=utf-8" };
      if (pg.next !== null) headers["x-next-page-token"] = pg.next;
      return { status: 200, headers, text: transferCsv(t, slice) };
    }
    if (version === 2)
      return json(
        pageJson(
          transferHeadV2(t),
          slice.map((x) => txJsonV2(x)),
          pg.next,
        ),
      );
    const top = {
      ...head(p),
      transferReference: t.transferReference,
      transferReferenceDate: t.transferReferenceDate,
    };
    return json(
      pageJson(
        top,
        slice.map((x) => txJson(x, false)),
        pg.next,
      ),
    );
  };
}

/** `/{v}/paymentpoints[/{id}/{sub}[/{ref}]]` → route and the path parts after `paymentpoints`. */
function match(path: string): { route: Route; parts: string[] } | null {
  const rest = path.slice(REPORTING_BASE.length).split("/");
  // rest: ["", "v1", "paymentpoints", id?, sub?, ref?]
  if (rest[0] !== "" || rest[2] !== "paymentpoints") return null;
  const version = rest[1];
  const parts = rest.slice(3).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  if (version === "v1") {
    if (parts.length === 0) return { route: listPoints, parts };
    if (parts.length === 2 && parts[1] === "transactions") return { route: transactions, parts };
    if (parts.length === 2 && parts[1] === "transfer-references") return { route: transferReferences, parts };
    if (parts.length === 3 && parts[1] === "transfers") return { route: transferContents(1), parts };
  }
  if (version === "v2" && parts.length === 3 && parts[1] === "transfers")
    return { route: transferContents(2), parts };
  return null;
}

/**
 * The reporting routes (GET only): headers and token first (401), then the route (404/405), then the
 * parameters (400). The books are brought up to date (ledger read, due transfers made) before each answer.
 */
export function handleReporting(d: ReportingDeps, req: EmuRequest): EmuResponse | null {
  if (req.path !== REPORTING_BASE && !req.path.startsWith(`${REPORTING_BASE}/`)) return null;
  try {
    const grant = authorize(d, req);
    const m = match(req.path);
    if (m === null) fail(404, "not_found", "no such reporting resource");
    if (req.method !== "GET") return { status: 405, headers: { allow: "GET" } };
    d.books.refresh();
    return m.route(d, req, grant, m.parts);
  } catch (e: unknown) {
    if (e instanceof ReportingError) return errorAnswer(e);
    throw e;
  }
}
