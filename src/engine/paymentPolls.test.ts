import pino from "pino";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import type { PaymentDriver } from "../payment/driver.js";
import { PaymentError } from "../payment/errors.js";
import { pollCheckin } from "./paymentPolls.js";

/** The check-in poll's jitter after a failure comes from the engine's random (EngineDeps.random). */
describe("check-in poll jitter", () => {
  async function secondPollAt(random: () => number): Promise<number> {
    const clock = new ManualClock();
    const start = clock.now();
    const calls: number[] = [];
    const payment = {
      checkin: async () => {
        calls.push(clock.now() - start);
        if (calls.length === 1) throw new PaymentError("unavailable", "down", { ambiguous: false });
        return { checkedIn: true, pollDelayMs: 1000 };
      },
    } as unknown as PaymentDriver;
    const done = pollCheckin(
      { payment, clock, logger: pino({ level: "silent" }), random },
      new AbortController().signal,
      () => {},
    );
    await clock.advanceAsync(3000, 1);
    await done;
    expect(calls).toHaveLength(2);
    return calls[1] ?? -1;
  }

  it("waits the service's delay plus the random share of half of it", async () => {
    expect(await secondPollAt(() => 0)).toBe(1000);
    expect(await secondPollAt(() => 0.5)).toBe(1250);
    expect(await secondPollAt(() => 0.999_999)).toBe(1499);
  });
});
