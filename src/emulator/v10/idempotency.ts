import type { EmuClock, EmuResponse } from "../types.js";
import { fail } from "./errors.js";

interface Stored {
  /** Canonical text of the first request's body. */
  request: string;
  response: EmuResponse;
  /** Emulator ms when the resource was created. */
  at: number;
}

/** How many times a retry re-checks a running call before giving up (bounded loop). */
const MAX_WAITS = 100;

/**
 * Idempotency keys of the four creating POSTs (pos-v10 §9 and its emulator choices): a key is scoped to
 * (integrator, merchant, method + path); it is remembered once its resource is created, whatever answer is
 * then sent, so "applied, then 500/reset" replays the id; a call refused before creating anything is not
 * remembered; a retry that arrives while the first call runs waits for it; keys are purged after
 * `retentionMs` (≥ 24 h) of emulator time.
 */
export class IdempotencyStore {
  private readonly done = new Map<string, Stored>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly clock: Pick<EmuClock, "now">,
    private readonly retentionMs: number,
  ) {}

  /**
   * Runs `create` once per key: a replay with the same request returns the stored answer, a different
   * request with the key answers 409 1306. `hold` (a fault-injected pause) is awaited inside the critical
   * section.
   */
  async run(
    scope: string,
    key: string,
    request: string,
    hold: (() => Promise<void>) | undefined,
    create: () => EmuResponse,
  ): Promise<EmuResponse> {
    const id = `${scope}\n${key}`;
    for (let i = 0; i < MAX_WAITS; i++) {
      const pending = this.running.get(id);
      if (pending === undefined) break;
      await pending;
    }
    const stored = this.done.get(id);
    if (stored !== undefined) {
      if (stored.request === request) return stored.response;
      fail(409, "1306", "the idempotency key was used for a different request");
    }
    if (this.running.has(id)) fail(500, "2002", "idempotent call still running");
    let release = (): void => {};
    this.running.set(
      id,
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    try {
      if (hold) await hold();
      const response = create();
      if (response.status === 200) this.done.set(id, { request, response, at: this.clock.now() });
      return response;
    } finally {
      this.running.delete(id);
      release();
    }
  }

  /** Forgets keys older than the retention (the map is in creation order). */
  purge(now: number): void {
    const cutoff = now - this.retentionMs;
    for (const [id, stored] of this.done) {
      if (stored.at > cutoff) break;
      this.done.delete(id);
    }
  }

  get size(): number {
    return this.done.size;
  }
}
