/** What `GET /_admin/stats` and `Emulator.stats()` report. */
export interface EmulatorStats {
  /** Requests received (all paths, admin included). */
  requests: number;
  /** Requests by `METHOD /path` with identifier segments replaced by `{id}`. */
  byRoute: Record<string, number>;
  /**
   * Polls of `GET /v10/payments/{id}` and `GET /v10/pointofsales/{id}/checkin` that came sooner than the
   * `pollDelayInMs` last returned for that resource, per integrator clientId (pos-v10 §10: counted, not
   * refused).
   */
  earlyPolls: Record<string, number>;
  /** Faults applied, by kind. */
  faults: Record<string, number>;
  /** Notification-service callbacks: attempts made, delivered (200), given up after the retries. */
  callbacks: { attempts: number; delivered: number; failed: number };
}

const ID_SEGMENT = /^(?:[0-9a-fA-F-]{16,}|\d{5,})$/;

/** Collects the emulator's counters. */
export class StatsRecorder {
  private readonly data: EmulatorStats = {
    requests: 0,
    byRoute: {},
    earlyPolls: {},
    faults: {},
    callbacks: { attempts: 0, delivered: 0, failed: 0 },
  };
  private readonly routeCache = new Map<string, string>();

  request(method: string, path: string): void {
    this.data.requests += 1;
    const cacheKey = `${method} ${path}`;
    let route = this.routeCache.get(cacheKey);
    if (route === undefined) {
      route = `${method} ${path
        .split("/")
        .map((s) => (ID_SEGMENT.test(s) ? "{id}" : s))
        .join("/")}`;
      if (this.routeCache.size > 10_000) this.routeCache.clear();
      this.routeCache.set(cacheKey, route);
    }
    this.data.byRoute[route] = (this.data.byRoute[route] ?? 0) + 1;
  }

  earlyPoll(clientId: string): void {
    this.data.earlyPolls[clientId] = (this.data.earlyPolls[clientId] ?? 0) + 1;
  }

  fault(kind: string): void {
    this.data.faults[kind] = (this.data.faults[kind] ?? 0) + 1;
  }

  callback(outcome: "attempt" | "delivered" | "failed"): void {
    if (outcome === "attempt") this.data.callbacks.attempts += 1;
    else this.data.callbacks[outcome] += 1;
  }

  snapshot(): EmulatorStats {
    return structuredClone(this.data);
  }
}
