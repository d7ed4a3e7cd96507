import { Agent, request } from "undici";

/** How the emulator's HTTPS callbacks (invoices, online payments) reach their receivers. */
export interface HttpsCallbackOptions {
  /**
   * Extra CA certificate (PEM) the callback client trusts, e.g. a test receiver's self-signed certificate.
   * When given it is the only trust anchor.
   */
  ca?: string;
  /**
   * Lets callbacks go to any port of a loopback host (127.0.0.1, ::1, localhost). Without it only ports 443
   * and 80 are used, as the service does; a test receiver listens on a free port.
   */
  allowLoopbackPorts?: boolean;
  /** Timeout of one attempt, real ms (default 5000). */
  timeoutMs?: number;
}

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Posts JSON to https URLs with TLS 1.2 or better (seed 002 "TLS 1.2"), and checks callback URLs: https
 * only, ports 443/80 unless the loopback relaxation is on.
 */
export class HttpsCallbackClient {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(private readonly options: HttpsCallbackOptions = {}) {
    this.agent = new Agent({
      keepAliveTimeout: 1000,
      connect: { minVersion: "TLSv1.2", ...(options.ca === undefined ? {} : { ca: options.ca }) },
    });
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  /** Why `url` cannot be a callback URL, or null when it can. */
  refuse(url: unknown): string | null {
    if (typeof url !== "string" || url.length > 2048) return "must be an https URL";
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return "must be an absolute https URL";
    }
    if (parsed.protocol !== "https:") return "must use https";
    if (parsed.username !== "" || parsed.password !== "") return "must not carry credentials";
    const port = parsed.port === "" ? 443 : Number(parsed.port);
    if (port === 443 || port === 80) return null;
    if (this.options.allowLoopbackPorts === true && LOOPBACK.has(parsed.hostname)) return null;
    return "must use port 443 or 80";
  }

  /** POSTs the JSON body; resolves the status code, or null when there was no answer. */
  async post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<number | null> {
    try {
      const res = await request(url, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json", ...headers },
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body.dump();
      return res.statusCode;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}
