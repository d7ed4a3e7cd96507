/**
 * Client of the transaction reporting interface (seed 002 §Reporting): the merchant's OpenID Connect tokens
 * (an access token, exchanged for a new one with the refresh token when the gateway says it is invalid, then
 * the request is repeated once), the three required headers (`Authorization: Bearer`, `x-gateway-client-id`,
 * `x-gateway-client-secret`), payment points, transactions by time range, transfer references and transfer
 * contents v1 (JSON) and v2 (JSON or CSV), each walked page by page with `pageToken` (URL-encoded: it carries
 * `/`, `+` and `=`) until the token is absent or null.
 *
 * Transport failures and 5xx of the GETs are repeated under the shared retry policy (../retry.ts). The token
 * exchange is a POST without an idempotency key, so the policy tries it once: a refresh token rotates, and a
 * repeat after a lost answer would present a token already spent.
 * Bodies are checked with zod; amounts are read exactly into signed minor units. The client secret and the
 * tokens never appear in an error message or a log line.
 */
import { Agent, type Dispatcher } from "undici";
import type { z } from "zod";
import type { Minor } from "../../core/money.js";
import { DEFAULT_RETRY_POLICY, decideRetry } from "../retry.js";
import {
  type Answer,
  errorText,
  invalidToken,
  PageJson,
  PointsAnswer,
  parseAnswer,
  parseCsv,
  parseTime,
  RefsAnswer,
  signedDecimal,
  TokenAnswer,
} from "./answers.js";
import {
  type PaymentPointInfo,
  ReportingClientError,
  type ReportingClientOptions,
  type ReportLine,
  type TransferRef,
} from "./types.js";

export { parseCsv, signedDecimal } from "./answers.js";
export type {
  PaymentPointInfo,
  ReportingClientOptions,
  ReportingCredentials,
  ReportLine,
  TransferRef,
} from "./types.js";
export { ReportingClientError } from "./types.js";

export class ReportingClient {
  private accessToken: string | null;
  private refreshToken: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly base: string;
  /** Token exchanges made (tests and the NOTE: a refresh in the middle of paging). */
  refreshes = 0;
  /** HTTP requests sent (pages, token exchanges, repeats). */
  requests = 0;

  constructor(private readonly o: ReportingClientOptions) {
    this.accessToken = o.accessToken ?? null;
    this.refreshToken = o.refreshToken;
    this.base = o.baseUrl.replace(/\/+$/, "");
    this.ownsDispatcher = o.dispatcher === undefined;
    this.dispatcher = o.dispatcher ?? new Agent({ connections: 4 });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** The payment points of the merchant. */
  async paymentPoints(): Promise<PaymentPointInfo[]> {
    const a = await this.get("/v1/paymentpoints", {});
    return this.parse(PointsAnswer, a, "payment points").paymentPoints;
  }

  /** Every line of a payment point in [from, to) (ISO date-times), all pages. */
  async transactions(pointId: string, from: string, to: string): Promise<ReportLine[]> {
    return this.walkJson(
      `/v1/paymentpoints/${encodeURIComponent(pointId)}/transactions`,
      { from, to },
      pointId,
      "transactions",
      null,
    );
  }

  /** Transfers of a payment point dated in [from, to] (`YYYY-MM-DD`). */
  async transferReferences(pointId: string, from: string, to: string): Promise<TransferRef[]> {
    const a = await this.get(`/v1/paymentpoints/${encodeURIComponent(pointId)}/transfer-references`, {
      from,
      to,
    });
    return this.parse(RefsAnswer, a, "transfer references").transferReferences.map((r) => ({
      paymentPointId: pointId,
      transferReference: r.transferReference,
      transferReferenceDate: r.transferReferenceDate,
      amount: r.totalTransferredAmount,
      currencyCode: r.currencyCode,
    }));
  }

  /** The lines one transfer covers: contents v1 (JSON), or v2 as JSON or CSV; all pages. */
  async transferContents(
    pointId: string,
    reference: string,
    version: 1 | 2 = 2,
    format: "json" | "csv" = "json",
  ): Promise<ReportLine[]> {
    const path = `/v${version}/paymentpoints/${encodeURIComponent(pointId)}/transfers/${encodeURIComponent(reference)}`;
    if (version === 2 && format === "csv") return this.walkCsv(path, pointId, reference);
    return this.walkJson(path, {}, pointId, `transfer v${version}`, reference);
  }

  private async walkJson(
    path: string,
    query: Record<string, string>,
    pointId: string,
    what: string,
    reference: string | null,
  ): Promise<ReportLine[]> {
    const out: ReportLine[] = [];
    let token: string | null = null;
    for (let page = 0; ; page++) {
      const a = await this.get(path, token === null ? query : { ...query, pageToken: token });
      const body = this.parse(PageJson, a, what);
      for (const l of body.transactions) {
        out.push({
          paymentPointId: pointId,
          type: l.type,
          amount: l.amount,
          currencyCode: l.currencyCode,
          timestamp: l.timestamp,
          at: parseTime(l.timestamp),
          paymentTransactionId: l.paymentTransactionId,
          orderId: l.externalTransactionId ?? l.merchantReference ?? null,
          transferReference: reference ?? l.transferReference ?? null,
        });
      }
      token = body.nextPageToken ?? null;
      await this.o.onPage?.(what, page, token);
      if (token === null) return out;
      if (page > 100_000) throw new ReportingClientError(0, `${what}: more than 100,000 pages`);
    }
  }

  private async walkCsv(path: string, pointId: string, reference: string): Promise<ReportLine[]> {
    const out: ReportLine[] = [];
    let token: string | null = null;
    for (let page = 0; ; page++) {
      const a = await this.get(path, token === null ? {} : { pageToken: token }, "text/csv");
      const rows = parseCsv(a.text);
      const head = rows[0] ?? [];
      const col = (name: string): number => {
        const i = head.indexOf(name);
        if (i < 0) throw new ReportingClientError(a.status, `transfer CSV lacks the column ${name}`);
        return i;
      };
      const [type, amount, currency, time, ref, txid] = [
        col("type"),
        col("amount"),
        col("currencyCode"),
        col("timestamp"),
        col("merchantReference"),
        col("paymentTransactionId"),
      ];
      for (const r of rows.slice(1)) {
        if (r.length === 1 && r[0] === "") continue;
        let minor: Minor;
        try {
          minor = signedDecimal(r[amount] ?? "");
        } catch {
          throw new ReportingClientError(a.status, "transfer CSV has a bad amount");
        }
        const timestamp = r[time] ?? "";
        out.push({
          paymentPointId: pointId,
          type: r[type] ?? "",
          amount: minor,
          currencyCode: r[currency] ?? "",
          timestamp,
          at: parseTime(timestamp),
          paymentTransactionId: r[txid] ?? "",
          orderId: (r[ref] ?? "") === "" ? null : (r[ref] as string),
          transferReference: reference,
        });
      }
      const next = a.headers["x-next-page-token"];
      token = typeof next === "string" && next !== "" ? next : null;
      await this.o.onPage?.("transfer v2 csv", page, token);
      if (token === null) return out;
    }
  }

  private parse<T>(schema: z.ZodType<T>, a: Answer, what: string): T {
    return parseAnswer(schema, a, what);
  }

  /** A reporting GET with the three headers; a refused token is refreshed and the request repeated once. */
  private async get(path: string, query: Record<string, string>, accept?: string): Promise<Answer> {
    if (this.accessToken === null) await this.refresh();
    // URLSearchParams percent-encodes `/`, `+` and `=` of a page token.
    const q = new URLSearchParams(query).toString();
    const url = `${this.base}${path}${q === "" ? "" : `?${q}`}`;
    for (let refreshed = false; ; refreshed = true) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.accessToken ?? ""}`,
        "x-gateway-client-id": this.o.clientId,
        "x-gateway-client-secret": this.o.clientSecret,
      };
      if (accept !== undefined) headers.accept = accept;
      const a = await this.send("GET", url, headers, null);
      if (a.status === 200) return a;
      if (a.status === 401 && !refreshed && invalidToken(a)) {
        await this.refresh();
        continue;
      }
      throw new ReportingClientError(a.status, `GET ${path}: ${a.status} ${errorText(a)}`);
    }
  }

  /** Exchanges the refresh token (rotating it) for a new access token. */
  private async refresh(): Promise<void> {
    const basic = Buffer.from(
      `${encodeURIComponent(this.o.clientId)}:${encodeURIComponent(this.o.clientSecret)}`,
    ).toString("base64");
    const a = await this.send(
      "POST",
      this.o.tokenUrl,
      { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
      new URLSearchParams({ grant_type: "refresh_token", refresh_token: this.refreshToken }).toString(),
    );
    if (a.status !== 200)
      throw new ReportingClientError(a.status, `token exchange refused: ${a.status} ${errorText(a)}`);
    const t = this.parse(TokenAnswer, a, "token exchange");
    this.refreshes += 1;
    this.accessToken = t.access_token;
    if (t.refresh_token !== undefined && t.refresh_token !== this.refreshToken) {
      this.refreshToken = t.refresh_token;
      await this.o.onRefreshToken?.(t.refresh_token);
    }
  }

  private async send(
    method: "GET" | "POST",
    url: string,
    headers: Record<string, string>,
    body: string | null,
  ): Promise<Answer> {
    const policy = this.o.retry ?? DEFAULT_RETRY_POLICY;
    const random = this.o.random ?? Math.random;
    const sleep = this.o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const u = new URL(url);
    for (let attempt = 1; ; attempt++) {
      this.requests += 1;
      let answer: Answer | null = null;
      let failure: string;
      try {
        const res = await this.dispatcher.request({
          origin: u.origin,
          path: `${u.pathname}${u.search}`,
          method,
          headers,
          body,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        answer = { status: res.statusCode, headers: res.headers, text: await res.body.text() };
        failure = `${res.statusCode}`;
      } catch (e) {
        failure = e instanceof Error ? ((e as { code?: string }).code ?? e.name) : "error";
      }
      const d = decideRetry(
        {
          attempt,
          method,
          outcome: answer === null ? { kind: "network" } : { kind: "status", status: answer.status },
          hasIdempotencyKey: false,
          policy,
        },
        random,
      );
      if (answer !== null && (answer.status < 500 || !d.retry)) return answer;
      if (!d.retry)
        throw new ReportingClientError(0, `${method} ${u.pathname}: ${failure} after ${attempt} attempt(s)`);
      await sleep(d.delayMs);
    }
  }
}
