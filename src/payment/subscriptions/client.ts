/**
 * Client of the subscriptions service's current (provider-based) interface, seed 000: recurring agreements,
 * subscription payments ("charges"), one-off payments, refunds and the callback settings of a provider.
 *
 * - OAuth 2.0 client credentials for the access token (renewed before it expires or after a 401);
 * - every answer is checked with a zod schema before use (`unknown` at the boundary);
 * - amounts are integer minor units here and decimal strings on the wire (core/money.ts);
 * - every mutation carries an `Idempotency-Key` header (the caller's stable key, so a retried POST is the
 *   same request), and the transport retries only what src/payment/retry.ts allows, sleeping on the
 *   injected clock;
 * - the client secret, the token and callback credentials never appear in errors or logs.
 */
import { randomUUID } from "node:crypto";
import { request } from "undici";
import { amountFromJson, formatAmount, type Minor } from "../../core/money.js";
import { type AttemptOutcome, DEFAULT_RETRY_POLICY, decideRetry, type RetryPolicy } from "../retry.js";
import {
  type AgreementRequest,
  type ChargeRequest,
  type OneOffRequest,
  type SubscriptionsClientOptions,
  SubscriptionsError,
} from "./types.js";
import {
  Agreement,
  type AgreementStatus,
  Charge,
  CreatedAgreement,
  CreatedOneOff,
  enc,
  landing,
  OneOff,
  Pending,
  Refund,
  reason,
  safeJson,
  Token,
} from "./wire.js";

export {
  type AgreementRequest,
  type CallbackLinks,
  type ChargeRequest,
  type OneOffRequest,
  type SubscriptionsClientOptions,
  SubscriptionsError,
} from "./types.js";
export type { AgreementStatus } from "./wire.js";

export class SubscriptionsClient {
  private token: { value: string; exp: number } | null = null;
  private readonly random: () => number;
  private readonly policy: RetryPolicy;

  constructor(private readonly o: SubscriptionsClientOptions) {
    this.random = o.random ?? Math.random;
    this.policy = o.retry ?? DEFAULT_RETRY_POLICY;
  }

  get providerId(): string {
    return this.o.providerId;
  }

  // ---- provider settings ------------------------------------------------------------------------------

  /** Sets the provider's payment status callback URL (https). */
  async setPaymentCallbackUrl(url: string): Promise<void> {
    await this.call("PATCH", "", [{ op: "replace", path: "/payment_status_callback_url", value: url }], {
      key: null,
    });
  }

  /** Sets an API key (token68) that the service sends in the Authorization header of every callback. */
  async setCallbackApiKey(apiKey: string): Promise<void> {
    await this.call("PUT", "/auth/apikey", { api_key: apiKey }, { key: null });
  }

  // ---- agreements -------------------------------------------------------------------------------------

  async createAgreement(r: AgreementRequest): Promise<{ id: string; landingUrl: string }> {
    const body: Record<string, unknown> = {
      amount: formatAmount(r.amount),
      currency: r.currency,
      country_code: r.countryCode,
      plan: r.plan,
      frequency: r.frequency ?? 12,
      external_id: r.externalId,
      expiration_timeout_minutes: r.expirationMinutes,
      links: [
        { rel: "user-redirect", href: r.links.userRedirect },
        { rel: "success-callback", href: r.links.success },
        { rel: "cancel-callback", href: r.links.cancel },
      ],
    };
    if (r.description !== undefined) body.description = r.description;
    if (r.mobilePhoneNumber !== undefined) body.mobile_phone_number = r.mobilePhoneNumber;
    const out = CreatedAgreement.parse(
      await this.call("POST", "/agreements", body, { key: `agreement:${r.externalId}` }),
    );
    return { id: out.id, landingUrl: landing(out.links) };
  }

  async getAgreement(id: string): Promise<{ id: string; status: AgreementStatus }> {
    const a = Agreement.parse(await this.call("GET", `/agreements/${enc(id)}`));
    return { id: a.id, status: a.status };
  }

  /** Cancels an active agreement as the merchant (a pending one-off reservation is cancelled too). */
  async cancelAgreement(id: string): Promise<void> {
    await this.call(
      "PATCH",
      `/agreements/${enc(id)}`,
      [{ op: "replace", path: "/status", value: "Canceled" }],
      {
        key: `cancel:${id}`,
      },
    );
  }

  // ---- charges ----------------------------------------------------------------------------------------

  /** Requests subscription payments; the answer lists the accepted (pending validation) and the rejected. */
  async createCharges(
    items: ChargeRequest[],
    key: string,
  ): Promise<{
    pending: { paymentId: string; externalId: string }[];
    rejected: { externalId: string | null; reason: string }[];
  }> {
    const body = items.map((c) => {
      const x: Record<string, unknown> = {
        agreement_id: c.agreementId,
        amount: formatAmount(c.amount),
        due_date: c.dueDate,
        external_id: c.externalId,
        description: c.description,
      };
      if (c.graceDays !== undefined) x.grace_period_days = c.graceDays;
      return x;
    });
    const out = Pending.parse(await this.call("POST", "/paymentrequests", body, { key }));
    return {
      pending: out.pending_payments.map((p) => ({ paymentId: p.payment_id, externalId: p.external_id })),
      rejected: out.rejected_payments.map((p) => ({
        externalId: p.external_id,
        reason: p.error_description,
      })),
    };
  }

  async getCharge(
    agreementId: string,
    paymentId: string,
  ): Promise<{ status: string; amount: Minor; dueDate: string }> {
    const c = Charge.parse(
      await this.call("GET", `/agreements/${enc(agreementId)}/paymentrequests/${enc(paymentId)}`),
    );
    return { status: c.status, amount: amountFromJson(c.amount), dueDate: c.due_date };
  }

  /** Gets several charges of one agreement (the interface has no list operation: one GET each). */
  async listCharges(
    agreementId: string,
    paymentIds: string[],
  ): Promise<{ paymentId: string; status: string; amount: Minor }[]> {
    const out: { paymentId: string; status: string; amount: Minor }[] = [];
    for (const id of paymentIds) {
      const c = await this.getCharge(agreementId, id);
      out.push({ paymentId: id, status: c.status, amount: c.amount });
    }
    return out;
  }

  // ---- one-off payments -------------------------------------------------------------------------------

  async createOneOff(agreementId: string, r: OneOffRequest): Promise<{ id: string; landingUrl: string }> {
    const body: Record<string, unknown> = {
      amount: formatAmount(r.amount),
      description: r.description,
      external_id: r.externalId,
      links: [{ rel: "user-redirect", href: r.redirectUrl }],
      auto_reserve: r.autoReserve,
    };
    if (r.expirationMinutes !== undefined) body.expiration_timeout_minutes = r.expirationMinutes;
    const out = CreatedOneOff.parse(
      await this.call("POST", `/agreements/${enc(agreementId)}/oneoffpayments`, body, {
        key: `oneoff:${r.externalId}`,
      }),
    );
    return { id: out.id, landingUrl: landing(out.links) };
  }

  async getOneOff(agreementId: string, id: string): Promise<{ status: string; amount: Minor }> {
    const x = OneOff.parse(
      await this.call("GET", `/agreements/${enc(agreementId)}/oneoffpayments/${enc(id)}`),
    );
    return { status: x.status, amount: amountFromJson(x.amount) };
  }

  /** Captures a reserved one-off payment (once; at most the reserved amount). */
  async captureOneOff(agreementId: string, id: string): Promise<void> {
    await this.call("POST", `/agreements/${enc(agreementId)}/oneoffpayments/${enc(id)}/capture`, undefined, {
      key: `capture:${id}`,
    });
  }

  async cancelOneOff(agreementId: string, id: string): Promise<void> {
    await this.call("DELETE", `/agreements/${enc(agreementId)}/oneoffpayments/${enc(id)}`);
  }

  // ---- refunds ----------------------------------------------------------------------------------------

  /** Refunds a captured payment in full (`amount` null) or in part; the outcome arrives by callback. */
  async refund(
    agreementId: string,
    paymentId: string,
    r: { amount: Minor | null; callbackUrl: string; externalId: string },
  ): Promise<{ id: string }> {
    const body: Record<string, unknown> = { status_callback_url: r.callbackUrl, external_id: r.externalId };
    if (r.amount !== null) body.amount = formatAmount(r.amount);
    const out = Refund.parse(
      await this.call("POST", `/agreements/${enc(agreementId)}/payments/${enc(paymentId)}/refunds`, body, {
        key: `refund:${r.externalId}`,
      }),
    );
    return { id: out.id };
  }

  // ---- transport --------------------------------------------------------------------------------------

  private async accessToken(force: boolean): Promise<string> {
    const now = this.o.clock.now();
    if (!force && this.token !== null && this.token.exp > now + 60_000) return this.token.value;
    const res = await request(this.o.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: this.o.clientId,
        client_secret: this.o.clientSecret,
      }).toString(),
      headersTimeout: this.o.timeoutMs ?? 10_000,
      bodyTimeout: this.o.timeoutMs ?? 10_000,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new SubscriptionsError(res.statusCode, `token request refused (${res.statusCode})`);
    const t = Token.safeParse(safeJson(text));
    if (!t.success) throw new SubscriptionsError(502, "token answer malformed");
    this.token = { value: t.data.access_token, exp: now + t.data.expires_in * 1000 };
    return this.token.value;
  }

  private async call(
    method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
    rest: string,
    body?: unknown,
    opts: { key?: string | null } = {},
  ): Promise<unknown> {
    const url = `${this.o.baseUrl}/api/providers/${enc(this.o.providerId)}${rest}`;
    const idempotencyKey = method === "POST" || method === "PATCH" ? (opts.key ?? randomUUID()) : null;
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      let outcome: AttemptOutcome;
      try {
        const headers: Record<string, string> = {
          authorization: `Bearer ${await this.accessToken(false)}`,
          correlationid: randomUUID(),
        };
        if (body !== undefined) headers["content-type"] = "application/json";
        if (idempotencyKey !== null) headers["idempotency-key"] = idempotencyKey;
        const res = await request(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          headersTimeout: this.o.timeoutMs ?? 10_000,
          bodyTimeout: this.o.timeoutMs ?? 10_000,
        });
        const text = await res.body.text();
        if (res.statusCode >= 200 && res.statusCode < 300) return text === "" ? undefined : safeJson(text);
        if (res.statusCode === 401 && !renewed) {
          renewed = true;
          this.token = null;
          attempt--;
          continue;
        }
        if (res.statusCode < 500)
          throw new SubscriptionsError(
            res.statusCode,
            `${method} ${rest || "/"}: ${res.statusCode} ${reason(text)}`,
          );
        outcome = { kind: "status", status: res.statusCode };
      } catch (e: unknown) {
        if (e instanceof SubscriptionsError) throw e;
        const name = e instanceof Error ? e.name : "";
        outcome = { kind: /Timeout/i.test(name) ? "timeout" : "network" };
      }
      const d = decideRetry(
        { attempt, method, outcome, hasIdempotencyKey: idempotencyKey !== null, policy: this.policy },
        this.random,
      );
      if (!d.retry)
        throw new SubscriptionsError(
          outcome.status ?? 0,
          `${method} ${rest || "/"}: ${outcome.kind} ${outcome.status ?? ""}`.trim(),
        );
      await this.o.clock.sleep(d.delayMs);
    }
  }
}
