import { Agent, request } from "undici";
import { type Emulator, type EmulatorOptions, startEmulator } from "../index.js";
import { type HttpsReceiver, startHttpsReceiver } from "../testing/httpsReceiver.js";

/** Monday 2026-03-02 10:00 UTC: the tests' virtual start. */
export const START = Date.parse("2026-03-02T10:00:00Z");
export const DK_USER = "+4520031801";
export const FAILING_USER = "+4520031806";

export interface Reply {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** An object view of a JSON answer, for assertions. */
export function o(value: unknown): Record<string, unknown> {
  return (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
}

/**
 * The subscriptions tests' client: an emulator with frozen real time (moves only by advances), an HTTPS
 * receiver it trusts for callbacks, a bearer token, and helpers for the common flows. Test support only.
 */
export class SubsKit {
  private readonly agent = new Agent({ connections: 8 });
  token = "";

  private constructor(
    readonly emu: Emulator,
    readonly rx: HttpsReceiver,
  ) {}

  static async start(extra: EmulatorOptions = {}, rx?: HttpsReceiver): Promise<SubsKit> {
    const receiver = rx ?? (await startHttpsReceiver());
    const emu = await startEmulator({
      startTime: START,
      timeSource: () => 0,
      bodyLimitBytes: 1024 * 1024,
      ...extra,
      subscriptions: { callbackCa: receiver.ca, callbackAllowLoopbackPorts: true, ...extra.subscriptions },
    });
    const kit = new SubsKit(emu, receiver);
    kit.token = await kit.fetchToken();
    return kit;
  }

  /** A kit on an emulator started elsewhere (its subscriptions trust `rx`); `close()` leaves both open. */
  static async on(emu: Emulator, rx: HttpsReceiver): Promise<SubsKit> {
    const kit = new SubsKit(emu, rx);
    kit.ownsEmulator = false;
    kit.token = await kit.fetchToken();
    return kit;
  }

  private ownsEmulator = true;

  get info() {
    return this.emu.info.subscriptions;
  }

  get pid(): string {
    return this.info.providerId;
  }

  async fetchToken(id = this.info.clientId, secret = this.info.clientSecret): Promise<string> {
    const r = await this.raw("POST", "/subscriptions-auth/connect/token", {
      text: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: id,
        client_secret: secret,
      }).toString(),
      contentType: "application/x-www-form-urlencoded",
    });
    return String(o(r.body).access_token ?? "");
  }

  async raw(
    method: string,
    path: string,
    opts: { text?: string; contentType?: string; token?: string | null } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (opts.contentType) headers["content-type"] = opts.contentType;
    const token = opts.token === undefined ? this.token : opts.token;
    if (token !== null && token !== "") headers.authorization = `Bearer ${token}`;
    const res = await request(`${this.info.baseUrl}${path}`, {
      method: method as "GET",
      body: opts.text,
      headers,
      dispatcher: this.agent,
    });
    const text = await res.body.text();
    let body: unknown = text;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: res.statusCode, body, headers: res.headers };
  }

  /** A JSON call; with the kit's own token, a 401 after a clock advance past its life fetches a new one. */
  async call(method: string, path: string, body?: unknown, token?: string | null): Promise<Reply> {
    const send = () =>
      this.raw(method, path, {
        text: body === undefined ? undefined : JSON.stringify(body),
        contentType: body === undefined ? undefined : "application/json",
        token,
      });
    const first = await send();
    if (first.status !== 401 || token !== undefined) return first;
    this.token = await this.fetchToken();
    return send();
  }

  /** Current interface under the kit's provider. */
  api(method: string, rest: string, body?: unknown): Promise<Reply> {
    return this.call(method, `/api/providers/${this.pid}${rest}`, body);
  }

  sim(rest: string, body?: unknown): Promise<Reply> {
    return this.call("POST", `/app/subscriptions/${rest}`, body ?? {}, null);
  }

  admin(method: string, rest: string, body?: unknown): Promise<Reply> {
    return this.call(method, `/_admin/subscriptions/${rest}`, body, null);
  }

  /** Sets the provider's payment callback URL to the receiver's `/payments`. */
  async useReceiver(): Promise<void> {
    const r = await this.api("PATCH", "", [
      { op: "replace", path: "/payment_status_callback_url", value: `${this.rx.url}/payments` },
    ]);
    if (r.status !== 204) throw new Error(`callback url: ${r.status}`);
  }

  agreementBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      currency: "DKK",
      country_code: "DK",
      plan: "Coffee flat rate",
      amount: "99.00",
      expiration_timeout_minutes: 60,
      external_id: "agr-1",
      links: [
        { rel: "user-redirect", href: "https://merchant.example/return" },
        { rel: "success-callback", href: `${this.rx.url}/agreement/success` },
        { rel: "cancel-callback", href: `${this.rx.url}/agreement/cancel` },
      ],
      ...extra,
    };
  }

  async createAgreement(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const r = await this.api("POST", "/agreements", this.agreementBody(extra));
    if (r.status !== 201) throw new Error(`agreement: ${r.status} ${JSON.stringify(r.body)}`);
    return o(r.body);
  }

  /** Creates an agreement and has `phone` accept it. */
  async activeAgreement(phone = DK_USER, extra: Record<string, unknown> = {}): Promise<string> {
    const id = String((await this.createAgreement(extra)).id);
    const r = await this.sim(`agreements/${id}/accept`, { phoneNumber: phone });
    if (r.status !== 200) throw new Error(`accept: ${r.status} ${JSON.stringify(r.body)}`);
    return id;
  }

  /** Advances emulator time (runs validation, executions, batches, retries). */
  advance(ms: number): void {
    this.emu.clock.advance(ms);
  }

  /** The UTC date `days` after the start date. */
  day(days: number): string {
    return new Date(START + days * 86_400_000).toISOString().slice(0, 10);
  }

  /** Payment callback elements received so far (all batches, flattened). */
  paymentEvents(): Record<string, unknown>[] {
    return this.rx.received
      .filter((r) => r.path === "/payments")
      .flatMap((r) => (Array.isArray(r.json) ? r.json.map(o) : []));
  }

  /** Waits for a payment callback element matching. */
  async paymentEvent(match: (e: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    await this.rx.waitFor(
      (r) => r.path === "/payments" && Array.isArray(r.json) && r.json.map(o).some(match),
    );
    const e = this.paymentEvents().find(match);
    if (e === undefined) throw new Error("unreachable");
    return e;
  }

  async requestPayments(items: Record<string, unknown>[]): Promise<Reply> {
    return this.api("POST", "/paymentrequests", items);
  }

  payment(agreementId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      agreement_id: agreementId,
      amount: 49.5,
      due_date: this.day(3),
      external_id: "inv-1",
      description: "March",
      ...extra,
    };
  }

  async close(): Promise<void> {
    if (this.ownsEmulator) {
      await this.emu.close();
      await this.rx.close();
    }
    await this.agent.destroy();
  }
}
