import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";
import { type Emulator, type EmulatorOptions, startEmulator } from "../index.js";

/** An answer as the conformance tests read it. */
export interface Answer {
  status: number;
  body: unknown;
  /** `body.code` when the body is an error object. */
  code: string | undefined;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text (overrides `body`). */
  raw?: string;
  contentType?: string | null;
  /** Idempotency key; `null` sends none. */
  key?: string | null;
  /** Replaces the default headers entirely (flat name/value list, duplicates allowed). */
  headers?: string[];
  /** Extra headers appended to the defaults. */
  extra?: string[];
  /** Bearer token; default the kit's token; `null` sends none. */
  token?: string | null;
  /** Aborts the call after this many real ms. */
  timeoutMs?: number;
}

/**
 * A V10 client for the emulator's conformance tests: real HTTP on 127.0.0.1, one token per kit, the required
 * headers by default. Test support code, not used by production paths.
 */
export class V10Kit {
  private readonly agent = new Agent({ connections: 16 });
  private tokenValue = "";

  private constructor(readonly emu: Emulator) {}

  static async start(options: EmulatorOptions = {}): Promise<V10Kit> {
    const kit = new V10Kit(await startEmulator({ pollDelayMs: 10, ...options }));
    kit.tokenValue = await kit.fetchToken(kit.emu.info.v10.clientId, kit.emu.info.v10.clientSecret);
    return kit;
  }

  get token(): string {
    return this.tokenValue;
  }

  /** Replaces the kit's token with a fresh one (after a clock advance past its expiry). */
  async refreshToken(): Promise<void> {
    this.tokenValue = await this.fetchToken(this.emu.info.v10.clientId, this.emu.info.v10.clientSecret);
  }

  /** Gets a token by client credentials; `merchantVat` goes into the claim. */
  async fetchToken(clientId: string, secret: string, merchantVat?: string): Promise<string> {
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (merchantVat !== undefined) form.set("merchant_vat", merchantVat);
    const res = await request(this.emu.info.v10.tokenUrl, {
      method: "POST",
      dispatcher: this.agent,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`,
      },
      body: form.toString(),
    });
    const body = (await res.body.json()) as { access_token?: unknown };
    if (typeof body.access_token !== "string") throw new Error(`token request failed: ${res.statusCode}`);
    return body.access_token;
  }

  /** Default headers of a V10 call (pos-v10 §3). */
  headers(vat = this.emu.info.v10.merchantVat): string[] {
    return [
      "x-service-merchant-vat-number",
      vat,
      "x-service-client-system-name",
      "vendd-tests",
      "x-service-client-system-version",
      "1.0.0",
    ];
  }

  async call(method: string, path: string, o: CallOptions = {}): Promise<Answer> {
    const headers = [...(o.headers ?? this.headers()), ...(o.extra ?? [])];
    const token = o.token === undefined ? this.tokenValue : o.token;
    if (token !== null) headers.push("authorization", `Bearer ${token}`);
    const creating =
      method === "POST" &&
      ["/v10/payments", "/v10/payments/prepare", "/v10/refunds", "/v10/pointofsales"].includes(path);
    const key = o.key === undefined ? (creating ? randomUUID() : null) : o.key;
    if (key !== null) headers.push("x-service-idempotency-key", key);
    const text = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
    if (text !== undefined && o.contentType !== null)
      headers.push("content-type", o.contentType ?? "application/json");
    const res = await request(`${this.emu.info.v10.baseUrl}${path}`, {
      method: method as "GET",
      headers,
      body: text,
      dispatcher: this.agent,
      signal: o.timeoutMs === undefined ? undefined : AbortSignal.timeout(o.timeoutMs),
    });
    const raw = await res.body.text();
    const body: unknown = raw === "" ? undefined : JSON.parse(raw);
    const code =
      typeof body === "object" && body !== null && typeof (body as { code?: unknown }).code === "string"
        ? (body as { code: string }).code
        : undefined;
    return { status: res.statusCode, body, code };
  }

  /** Creates a PoS on the seeded store; returns its posId and beaconId. */
  async createPos(extra: Record<string, unknown> = {}): Promise<{ posId: string; beaconId: string }> {
    const r = await this.call("POST", "/v10/pointofsales", {
      body: {
        merchantPosId: randomUUID(),
        storeId: this.emu.info.v10.storeId,
        name: "Vending 1",
        supportedBeaconTypes: ["QR"],
        ...extra,
      },
    });
    const posId = (r.body as { posId?: string } | undefined)?.posId;
    if (r.status !== 200 || posId === undefined) throw new Error(`create PoS failed: ${r.status} ${r.code}`);
    const pos = await this.call("GET", `/v10/pointofsales/${posId}`);
    return { posId, beaconId: (pos.body as { beaconId: string }).beaconId };
  }

  /** Initiates a payment; returns the answer. */
  initiate(posId: string, amount = 12.5, extra: Record<string, unknown> = {}, key?: string): Promise<Answer> {
    return this.call("POST", "/v10/payments", {
      body: {
        posId,
        orderId: randomUUID(),
        amount,
        currencyCode: "DKK",
        plannedCaptureDelay: "None",
        ...extra,
      },
      key,
    });
  }

  /** The payment's current record. */
  async payment(paymentId: string): Promise<Record<string, unknown>> {
    const r = await this.call("GET", `/v10/payments/${paymentId}`);
    if (r.status !== 200) throw new Error(`GET payment failed: ${r.status}`);
    return r.body as Record<string, unknown>;
  }

  /** Initiates, checks in and accepts with `phone`, and waits (advancing the clock) until Reserved. */
  async reserved(
    posId: string,
    beaconId: string,
    amount = 12.5,
    phone = "+4520031801",
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    this.emu.userSimulation.checkin(beaconId, phone);
    const r = await this.initiate(posId, amount, extra);
    const paymentId = (r.body as { paymentId: string }).paymentId;
    this.emu.userSimulation.accept(beaconId, phone);
    this.emu.clock.advance(1000);
    const p = await this.payment(paymentId);
    if (p.status !== "Reserved") throw new Error(`payment not reserved: ${String(p.status)}`);
    return paymentId;
  }

  async close(): Promise<void> {
    await this.agent.destroy();
    await this.emu.close();
  }
}
