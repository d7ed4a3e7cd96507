import { Agent, request } from "undici";
import { EmulatorInputError } from "./errors.js";
import type { StatsRecorder } from "./stats.js";

/** The notification-service body (pos-v10 §16, PascalCase). */
export interface CheckinNotification {
  MerchantId: string;
  MerchantBrandId: string;
  MerchantLocationId: string;
  MerchantPosId: string;
  PosId: string;
}

export interface CallbackOptions {
  /**
   * Real-time waits before the retries, ms (default 1000, 2000, 4000: pos-v10 §16 "retried 3 times", spacing
   * the emulator's choice). Real time, not emulator time: delivery is a network matter and a test that
   * advances the clock should not fire a burst of retries.
   */
  retryDelaysMs?: readonly number[];
  /** Timeout of one attempt, ms (default 2000). */
  timeoutMs?: number;
}

/**
 * The notification service: callback aliases map to integrator URLs (admin API); a check-in on a PoS created
 * with an alias POSTs the JSON body to the URL; any answer other than 200 (or no answer) is retried.
 */
export class CallbackNotifier {
  private readonly aliases = new Map<string, string>();
  private readonly agent = new Agent({ keepAliveTimeout: 1000 });
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  private readonly delays: readonly number[];
  private readonly timeoutMs: number;

  constructor(
    private readonly stats: StatsRecorder,
    options: CallbackOptions = {},
  ) {
    this.delays = options.retryDelaysMs ?? [1000, 2000, 4000];
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  /** Registers (or re-points) an alias; the URL must be http(s). */
  register(alias: string, url: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new EmulatorInputError("callback url is not a URL");
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new EmulatorInputError("callback url must be http(s)");
    if (alias.length === 0 || alias.length > 36)
      throw new EmulatorInputError("callback alias must be 1-36 characters");
    this.aliases.set(alias, url);
  }

  has(alias: string): boolean {
    return this.aliases.has(alias);
  }

  /** Sends the notification in the background: the first attempt now, then the retries. */
  notify(alias: string, body: CheckinNotification): void {
    const url = this.aliases.get(alias);
    if (url === undefined || this.closed) return;
    this.attempt(url, JSON.stringify(body), 0);
  }

  private attempt(url: string, body: string, index: number): void {
    this.stats.callback("attempt");
    this.post(url, body).then((ok) => {
      if (ok) {
        this.stats.callback("delivered");
        return;
      }
      const wait = this.delays[index];
      if (wait === undefined || this.closed) {
        this.stats.callback("failed");
        return;
      }
      const t = setTimeout(() => {
        this.timers.delete(t);
        this.attempt(url, body, index + 1);
      }, wait);
      this.timers.add(t);
    });
  }

  private async post(url: string, body: string): Promise<boolean> {
    try {
      const res = await request(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.agent.destroy();
  }
}
