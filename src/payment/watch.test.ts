import { describe, expect, it } from "vitest";
import { flushMicrotasks, ManualClock } from "../core/clock.js";
import type { PaymentDriver, PaymentObservation, PaymentRef, PaymentState } from "./driver.js";
import { PaymentError } from "./errors.js";
import { watchPayment } from "./watch.js";

const ref: PaymentRef = { id: "p-1", orderId: "o-1", mode: "reservation" };

type Step = { state: PaymentState; delay: number } | "fail" | "forbidden";

/** A recording fake driver whose `status` answers from a script and notes the clock time of each poll. */
function scriptedDriver(clock: ManualClock, script: Step[]) {
  const polls: number[] = [];
  const status = async (): Promise<PaymentObservation> => {
    polls.push(clock.now());
    const step = script.shift();
    if (step === undefined) throw new Error("script exhausted");
    if (step === "fail") throw new PaymentError("unavailable", "timeout", { ambiguous: false });
    if (step === "forbidden") throw new PaymentError("forbidden", "403");
    return { ref, state: step.state, amount: 500, partialCapturePossible: null, pollDelayMs: step.delay };
  };
  const driver: Pick<PaymentDriver, "status"> = { status };
  return { driver, polls };
}

/** Runs the watch to its end while moving the manual clock in 10 ms steps (bounded). */
async function collect(clock: ManualClock, iter: AsyncIterable<PaymentObservation>) {
  const seen: PaymentState[] = [];
  let done = false;
  let error: unknown = null;
  const run = (async () => {
    for await (const obs of iter) seen.push(obs.state);
  })().then(
    () => {
      done = true;
    },
    (e: unknown) => {
      error = e;
      done = true;
    },
  );
  for (let i = 0; i < 2_000 && !done; i++) await clock.advanceAsync(10, 10);
  await run;
  return { seen, error };
}

describe("watchPayment", () => {
  it("polls spaced exactly by the last pollDelayMs and stops at a final state", async () => {
    const clock = new ManualClock(0);
    const { driver, polls } = scriptedDriver(clock, [
      { state: "pending", delay: 1000 },
      { state: "issued", delay: 1500 },
      { state: "issued", delay: 1000 },
      { state: "cancelled", delay: 1000 },
      { state: "pending", delay: 1000 },
    ]);
    const { seen, error } = await collect(clock, watchPayment(driver, ref, { clock, until: () => false }));
    expect(error).toBeNull();
    expect(seen).toEqual(["pending", "issued", "issued", "cancelled"]);
    expect(polls).toEqual([0, 1000, 2500, 3500]);
  });

  it("keeps the last delay plus jitter after a failed poll and ends when `until` is satisfied", async () => {
    const clock = new ManualClock(0);
    const { driver, polls } = scriptedDriver(clock, [
      { state: "pending", delay: 1200 },
      "fail",
      "fail",
      { state: "reserved", delay: 1000 },
      { state: "captured", delay: 1000 },
    ]);
    const { seen } = await collect(
      clock,
      watchPayment(driver, ref, { clock, until: (o) => o.state === "reserved", random: () => 0.5 }),
    );
    expect(seen).toEqual(["pending", "reserved"]);
    // After each failure: the service's last delay (1200, never sooner) plus a quarter of it (jitter 0.5).
    expect(polls).toEqual([0, 1200, 1200 + 1500, 1200 + 1500 + 1500]);
  });

  it("gives up after maxConsecutiveFailures and rethrows other errors at once", async () => {
    const clock = new ManualClock(0);
    const a = scriptedDriver(clock, ["fail", "fail", "fail", { state: "pending", delay: 1000 }]);
    const r1 = await collect(
      clock,
      watchPayment(a.driver, ref, { clock, until: () => false, maxConsecutiveFailures: 3, random: () => 0 }),
    );
    expect((r1.error as PaymentError).code).toBe("unavailable");
    expect(a.polls).toEqual([0, 1000, 2000]);

    const b = scriptedDriver(clock, ["forbidden"]);
    const r2 = await collect(clock, watchPayment(b.driver, ref, { clock, until: () => false }));
    expect((r2.error as PaymentError).code).toBe("forbidden");
    expect(b.polls.length).toBe(1);
  });

  it("stops on abort while sleeping", async () => {
    const clock = new ManualClock(0);
    const { driver, polls } = scriptedDriver(clock, [
      { state: "pending", delay: 1000 },
      { state: "pending", delay: 1000 },
    ]);
    const ac = new AbortController();
    const iter = watchPayment(driver, ref, { clock, signal: ac.signal, until: () => false });
    const first = await iter.next();
    expect(first.value?.state).toBe("pending");
    const next = iter.next();
    await flushMicrotasks();
    ac.abort(new Error("stop"));
    await expect(next).rejects.toThrow("stop");
    expect(polls).toEqual([0]);
  });
});
