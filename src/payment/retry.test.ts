import { describe, expect, it } from "vitest";
import {
  type AttemptOutcome,
  backoffDelay,
  clampRetries,
  DEFAULT_RETRY_POLICY,
  decideRepeat,
  decideRetry,
  pollRetryDelay,
  seededRandom,
} from "./retry.js";

const policy = { max: 2, baseDelayMs: 100, maxDelayMs: 2000 };
const half = () => 0.5;
const net: AttemptOutcome = { kind: "network" };
const timeout: AttemptOutcome = { kind: "timeout" };
const s = (status: number, code?: string): AttemptOutcome => ({ kind: "status", status, code });

describe("decideRetry", () => {
  const table: {
    name: string;
    attempt: number;
    method: string;
    outcome: AttemptOutcome;
    key: boolean;
    natural?: boolean;
    retry: boolean;
  }[] = [
    { name: "GET network error", attempt: 1, method: "GET", outcome: net, key: false, retry: true },
    { name: "GET timeout", attempt: 1, method: "GET", outcome: timeout, key: false, retry: true },
    { name: "GET 500", attempt: 1, method: "GET", outcome: s(500, "2001"), key: false, retry: true },
    { name: "GET 503", attempt: 2, method: "GET", outcome: s(503), key: false, retry: true },
    { name: "GET 501 is permanent", attempt: 1, method: "GET", outcome: s(501), key: false, retry: false },
    { name: "GET 404", attempt: 1, method: "GET", outcome: s(404), key: false, retry: false },
    { name: "GET 400", attempt: 1, method: "GET", outcome: s(400, "1099"), key: false, retry: false },
    { name: "POST with key, reset", attempt: 1, method: "POST", outcome: net, key: true, retry: true },
    { name: "POST with key, timeout", attempt: 2, method: "POST", outcome: timeout, key: true, retry: true },
    { name: "POST with key, 500", attempt: 1, method: "POST", outcome: s(500), key: true, retry: true },
    { name: "POST without key, reset", attempt: 1, method: "POST", outcome: net, key: false, retry: false },
    { name: "POST without key, 500", attempt: 1, method: "POST", outcome: s(500), key: false, retry: false },
    {
      name: "capture (natural), reset",
      attempt: 1,
      method: "POST",
      outcome: net,
      key: false,
      natural: true,
      retry: true,
    },
    {
      name: "cancel (natural), 502",
      attempt: 1,
      method: "POST",
      outcome: s(502),
      key: false,
      natural: true,
      retry: true,
    },
    {
      name: "POST with key, 409",
      attempt: 1,
      method: "POST",
      outcome: s(409, "1301"),
      key: true,
      retry: false,
    },
    { name: "POST with key, 401", attempt: 1, method: "POST", outcome: s(401), key: true, retry: false },
    { name: "DELETE timeout", attempt: 1, method: "DELETE", outcome: timeout, key: false, retry: true },
    { name: "lower-case method", attempt: 1, method: "delete", outcome: s(500), key: false, retry: true },
    { name: "budget used up", attempt: 3, method: "GET", outcome: net, key: false, retry: false },
    { name: "budget used up (key)", attempt: 3, method: "POST", outcome: net, key: true, retry: false },
  ];
  for (const row of table) {
    it(row.name, () => {
      const d = decideRetry(
        {
          attempt: row.attempt,
          method: row.method,
          outcome: row.outcome,
          hasIdempotencyKey: row.key,
          naturallyIdempotent: row.natural,
          policy,
        },
        half,
      );
      expect(d.retry).toBe(row.retry);
    });
  }

  it("max 0 never retries", () => {
    const d = decideRetry(
      { attempt: 1, method: "GET", outcome: net, hasIdempotencyKey: false, policy: { ...policy, max: 0 } },
      half,
    );
    expect(d).toEqual({ retry: false });
  });
});

describe("backoffDelay", () => {
  it("grows exponentially with equal jitter and is capped", () => {
    const zero = () => 0;
    const one = () => 0.999999;
    expect(backoffDelay(1, policy, zero)).toBe(50);
    expect(backoffDelay(1, policy, one)).toBe(99);
    expect(backoffDelay(2, policy, zero)).toBe(100);
    expect(backoffDelay(3, policy, zero)).toBe(200);
    expect(backoffDelay(10, policy, zero)).toBe(1000);
    expect(backoffDelay(10, policy, one)).toBeLessThanOrEqual(2000);
  });

  it("stays within [d/2, d] for every seeded draw", () => {
    const random = seededRandom(42);
    for (let attempt = 1; attempt <= 6; attempt++) {
      const d = Math.min(2000, 100 * 2 ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const v = backoffDelay(attempt, DEFAULT_RETRY_POLICY, random);
        expect(v).toBeGreaterThanOrEqual(d / 2);
        expect(v).toBeLessThanOrEqual(d);
      }
    }
  });

  it("is reproducible with the same seed", () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const da = [1, 2, 3].map((n) => backoffDelay(n, policy, a));
    const db = [1, 2, 3].map((n) => backoffDelay(n, policy, b));
    expect(da).toEqual(db);
    const c = seededRandom(8);
    expect([1, 2, 3].map((n) => backoffDelay(n, policy, c))).not.toEqual(da);
  });
});

describe("decideRetry: the transport's attempts", () => {
  it("never more than 6 calls (pos-v10 §12), whatever the policy says", () => {
    const many = { ...policy, max: 9 };
    const at = (attempt: number) =>
      decideRetry({ attempt, method: "GET", outcome: net, hasIdempotencyKey: false, policy: many }, half)
        .retry;
    expect([1, 2, 3, 4, 5, 6].map(at)).toEqual([true, true, true, true, true, false]);
    expect(clampRetries(9)).toBe(5);
    expect(clampRetries(-1)).toBe(0);
    expect(clampRetries(Number.NaN)).toBe(0);
    expect(clampRetries(2.7)).toBe(2);
  });

  it("the delay of a retry is the backoff of the failed attempt, jittered", () => {
    const d = decideRetry(
      { attempt: 2, method: "GET", outcome: net, hasIdempotencyKey: false, policy },
      () => 0,
    );
    expect(d).toEqual({ retry: true, delayMs: 100 });
  });
});

describe("decideRepeat: a loop above the transport", () => {
  it("repeats while the budget lasts, after a jittered backoff", () => {
    const backoff = { baseDelayMs: 100, maxDelayMs: 2000 };
    expect(decideRepeat({ attempt: 1, limit: 2 }, backoff, () => 0)).toEqual({ retry: true, delayMs: 50 });
    expect(decideRepeat({ attempt: 1, limit: 2 }, backoff, () => 0.999_999)).toEqual({
      retry: true,
      delayMs: 99,
    });
    expect(decideRepeat({ attempt: 2, limit: 2 }, backoff, half)).toEqual({ retry: false });
    expect(decideRepeat({ attempt: 1, limit: 1 }, backoff, half)).toEqual({ retry: false });
  });

  it("refuses a nonsensical attempt number", () => {
    const backoff = { baseDelayMs: 100, maxDelayMs: 2000 };
    for (const attempt of [0, -1, 1.5, Number.NaN]) {
      expect(decideRepeat({ attempt, limit: 5 }, backoff, half)).toEqual({ retry: false });
    }
  });
});

describe("pollRetryDelay: after a failed poll", () => {
  it("is never sooner than the service's delay and at most half of it later", () => {
    const random = seededRandom(3);
    for (let i = 0; i < 100; i++) {
      const d = pollRetryDelay(1000, random);
      expect(d).toBeGreaterThanOrEqual(1000);
      expect(d).toBeLessThanOrEqual(1500);
    }
    expect(pollRetryDelay(1000, () => 0)).toBe(1000);
    expect(pollRetryDelay(1000, () => 1)).toBe(1499);
    expect(pollRetryDelay(-5, half)).toBe(0);
  });
});
