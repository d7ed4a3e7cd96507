import { Agent, request } from "undici";
import type { CallbackAuth } from "./model.js";

/** One callback as the admin API shows it. */
export interface DeliveryRecord {
  id: number;
  kind: "agreement" | "payment" | "oneoff" | "refund";
  url: string;
  body: unknown;
  /** Attempts made so far (1 = the first try). */
  attempts: number;
  status: "pending" | "delivered" | "failed";
  /** Emulator ms of the next attempt while waiting for a retry (null while an attempt is in flight). */
  nextAttemptAt: number | null;
  /** Why the last attempt failed (HTTP status, network error, refused URL). */
  lastError: string | null;
  /** Emulator ms of the successful attempt. */
  deliveredAt: number | null;
}

/** A payment event waiting for the next 2-minute batch. */
export interface BatchedEvent {
  providerId: string;
  body: Record<string, unknown>;
}

export interface DeliveryOptions {
  /** PEM certificates trusted for callback TLS besides the system store (test receivers). */
  ca?: string | string[];
  /** Allows any port (not only 80/443) for loopback hosts (127.0.0.0/8, ::1, localhost). */
  allowLoopbackPorts: boolean;
  /** Real-time timeout of one attempt, ms. */
  timeoutMs?: number;
}

export const BATCH_INTERVAL_MS = 120_000;
export const BATCH_LIMIT = 1000;
/** 8 retries: 5 s, then doubling (the back-off formula is the emulator's choice). */
export const RETRY_DELAYS_MS = [5, 10, 20, 40, 80, 160, 320, 640].map((s) => s * 1000);

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Why the URL may not receive callbacks, or null (https only; ports 80 and 443). */
export function refuseUrl(url: string, allowLoopbackPorts: boolean): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "not a URL";
  }
  if (u.protocol !== "https:") return "callbacks go to https URLs only";
  const port = u.port === "" ? 443 : Number(u.port);
  if (port === 80 || port === 443) return null;
  if (allowLoopbackPorts && isLoopback(u.hostname)) return null;
  return `callbacks go to ports 80 and 443 only (got ${port})`;
}

/**
 * The subscriptions callback service: immediate callbacks (agreements, one-off Reserved/Rejected/50013,
 * refunds) and payment events batched every 2 minutes of emulator time (up to 1000 per batch, one call per
 * provider URL per batch); every non-2xx answer is retried 8 times, 5 s after the first attempt and
 * doubling, in emulator time. Attempts themselves are real HTTPS requests.
 */
export class SubsDelivery {
  private readonly agent: Agent;
  private readonly records: DeliveryRecord[] = [];
  private readonly batch: BatchedEvent[] = [];
  private nextBatchAt: number;
  private nextId = 1;
  private closed = false;
  private readonly inflight = new Set<Promise<void>>();
  private readonly tokens = new Map<string, { token: string; until: number }>();

  constructor(
    private readonly now: () => number,
    private readonly options: DeliveryOptions,
    /** The callback URL and auth of a provider, looked up when a batch is sent. */
    private readonly providerTarget: (
      providerId: string,
    ) => { url: string | null; auth: CallbackAuth } | null,
    private readonly authOf: (providerId: string) => CallbackAuth,
  ) {
    this.agent = new Agent({ keepAliveTimeout: 1000, connect: options.ca ? { ca: options.ca } : {} });
    this.nextBatchAt = now() + BATCH_INTERVAL_MS;
  }

  /** Sends one callback now (and retries it). */
  send(kind: DeliveryRecord["kind"], url: string, body: unknown, providerId: string): DeliveryRecord {
    const rec: DeliveryRecord = {
      id: this.nextId++,
      kind,
      url,
      body,
      attempts: 0,
      status: "pending",
      nextAttemptAt: null,
      lastError: null,
      deliveredAt: null,
    };
    this.records.push(rec);
    this.attempt(rec, providerId);
    return rec;
  }

  /** Queues a payment event for the next batch. */
  enqueue(event: BatchedEvent): void {
    this.batch.push(event);
  }

  /** Runs due batches and retries. */
  tick(now: number): void {
    if (now >= this.nextBatchAt) {
      this.flush();
      this.nextBatchAt = now + BATCH_INTERVAL_MS;
    }
    for (const [rec, providerId] of this.retries) {
      if (rec.status === "pending" && rec.nextAttemptAt !== null && rec.nextAttemptAt <= now) {
        this.retries.delete(rec);
        this.attempt(rec, providerId);
      }
    }
  }

  /**
   * Emulator ms of the next thing to do (for the clock's schedule): the next batch while payment events wait,
   * the earliest retry; null when nothing waits.
   */
  nextDue(): number | null {
    let min = this.batch.length > 0 ? this.nextBatchAt : null;
    for (const rec of this.retries.keys()) {
      const t = rec.status === "pending" ? rec.nextAttemptAt : null;
      if (t !== null && (min === null || t < min)) min = t;
    }
    return min;
  }

  /** Emulator ms of the next batch. */
  get nextBatch(): number {
    return this.nextBatchAt;
  }

  private readonly retries = new Map<DeliveryRecord, string>();

  private flush(): void {
    const taken = this.batch.splice(0, BATCH_LIMIT);
    const byProvider = new Map<string, Record<string, unknown>[]>();
    for (const e of taken) {
      const list = byProvider.get(e.providerId) ?? [];
      list.push(e.body);
      byProvider.set(e.providerId, list);
    }
    for (const [providerId, bodies] of byProvider) {
      const target = this.providerTarget(providerId);
      if (target === null || target.url === null) continue;
      this.send("payment", target.url, bodies, providerId);
    }
  }

  pendingEvents(): readonly BatchedEvent[] {
    return this.batch;
  }

  list(): readonly DeliveryRecord[] {
    return this.records;
  }

  private attempt(rec: DeliveryRecord, providerId: string): void {
    if (this.closed) return;
    rec.attempts += 1;
    rec.nextAttemptAt = null;
    const refused = refuseUrl(rec.url, this.options.allowLoopbackPorts);
    if (refused !== null) {
      rec.status = "failed";
      rec.nextAttemptAt = null;
      rec.lastError = refused;
      return;
    }
    const p = this.post(rec.url, JSON.stringify(rec.body), this.authOf(providerId)).then((error) => {
      this.inflight.delete(p);
      if (error === null) {
        rec.status = "delivered";
        rec.deliveredAt = this.now();
        rec.nextAttemptAt = null;
        return;
      }
      rec.lastError = error;
      const wait = RETRY_DELAYS_MS[rec.attempts - 1];
      if (wait === undefined) {
        rec.status = "failed";
        rec.nextAttemptAt = null;
        return;
      }
      rec.nextAttemptAt = this.now() + wait;
      this.retries.set(rec, providerId);
    });
    this.inflight.add(p);
  }

  private async authorization(auth: CallbackAuth): Promise<string | null> {
    switch (auth.kind) {
      case "none":
        return null;
      case "basic":
        return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
      case "apikey":
        return auth.value;
      case "oauth2":
        return `Bearer ${await this.oauthToken(auth)}`;
    }
  }

  /** OAuth 2.0 client credentials (RFC 6749 §4.4) against the merchant's token URL, cached until expiry. */
  private async oauthToken(auth: Extract<CallbackAuth, { kind: "oauth2" }>): Promise<string> {
    const key = `${auth.tokenUrl}\n${auth.clientId}`;
    const known = this.tokens.get(key);
    if (known && known.until > this.now()) return known.token;
    const refused = refuseUrl(auth.tokenUrl, this.options.allowLoopbackPorts);
    if (refused !== null) throw new Error(`token url: ${refused}`);
    const res = await request(auth.tokenUrl, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials" }).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(
          `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`,
        ).toString("base64")}`,
      },
      dispatcher: this.agent,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 2000),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`token endpoint answered ${res.statusCode}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error("token endpoint answer is not JSON");
    }
    const o = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
    if (typeof o.access_token !== "string" || o.access_token === "")
      throw new Error("token endpoint answer has no access_token");
    const life = typeof o.expires_in === "number" && o.expires_in > 0 ? o.expires_in : 300;
    this.tokens.set(key, { token: o.access_token, until: this.now() + life * 1000 });
    return o.access_token;
  }

  private async post(url: string, body: string, auth: CallbackAuth): Promise<string | null> {
    try {
      const authorization = await this.authorization(auth);
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (authorization !== null) headers.authorization = authorization;
      const res = await request(url, {
        method: "POST",
        body,
        headers,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 2000),
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
    } catch (e: unknown) {
      return e instanceof Error ? e.message : "network error";
    }
  }

  /** Resolves when every attempt in flight has finished (tests). */
  async settle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.settle();
    await this.agent.destroy();
  }
}
