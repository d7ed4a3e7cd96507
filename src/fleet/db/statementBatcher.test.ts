import { describe, expect, it } from "vitest";
import { type CoalesceOptions, coalescer } from "./statementBatcher.js";

/** A call's answer that the test releases when it wants. */
interface Pending<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}
function pending<T>(): Pending<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((r) => setImmediate(r));

interface Call {
  key: string;
  n: number;
}

/**
 * A fake database: each `one` and `many` stays open until the test settles it, and every statement sent is
 * recorded (the calls' numbers).
 */
function fake(overrides: Partial<CoalesceOptions<Call, string>> = {}) {
  const sent: { kind: "one" | "many"; ns: number[]; answer: Pending<string[]> }[] = [];
  const sizes: number[] = [];
  const run = coalescer<Call, string>({
    maxInFlight: 1,
    maxBatch: 10,
    key: (c) => c.key,
    one: async (c) => {
      const answer = pending<string[]>();
      sent.push({ kind: "one", ns: [c.n], answer });
      return ((await answer.promise)[0] ?? "none") as string;
    },
    many: (cs) => {
      const answer = pending<string[]>();
      sent.push({ kind: "many", ns: cs.map((c) => c.n), answer });
      return answer.promise;
    },
    wroteNothing: (err) => err instanceof Error && err.message === "rolled back",
    onSend: (n) => sizes.push(n),
    ...overrides,
  });
  return { run, sent, sizes };
}

describe("coalescer", () => {
  it("sends a call at once while fewer than maxInFlight are out; the calls that waited go together, in order", async () => {
    const { run, sent, sizes } = fake();
    const first = run({ key: "a", n: 1 });
    expect(sent.map((s) => [s.kind, s.ns])).toEqual([["one", [1]]]);
    const later = [run({ key: "b", n: 2 }), run({ key: "c", n: 3 }), run({ key: "d", n: 4 })];
    await settle();
    expect(sent).toHaveLength(1); // they wait for the one out
    sent[0]?.answer.resolve(["r1"]);
    await settle();
    expect(sent.map((s) => [s.kind, s.ns])).toEqual([
      ["one", [1]],
      ["many", [2, 3, 4]],
    ]);
    sent[1]?.answer.resolve(["r2", "r3", "r4"]);
    expect(await first).toBe("r1");
    expect(await Promise.all(later)).toEqual(["r2", "r3", "r4"]);
    expect(sizes).toEqual([1, 3]);
  });

  it("never puts two calls of one key in a statement, and keeps a held-back call's place", async () => {
    const { run, sent } = fake();
    const all = [
      run({ key: "a", n: 1 }),
      run({ key: "a", n: 2 }),
      run({ key: "b", n: 3 }),
      run({ key: "a", n: 4 }),
      run({ key: "c", n: 5 }),
    ];
    sent[0]?.answer.resolve(["r1"]);
    await settle();
    expect(sent[1]?.ns).toEqual([2, 3, 5]);
    sent[1]?.answer.resolve(["r2", "r3", "r5"]);
    await settle();
    expect(sent[2]?.ns).toEqual([4]);
    expect(sent[2]?.kind).toBe("one");
    sent[2]?.answer.resolve(["r4"]);
    expect(await Promise.all(all)).toEqual(["r1", "r2", "r3", "r4", "r5"]);
  });

  it("never has two calls of one key out at once: a free slot waits for the statement holding the key", async () => {
    const { run, sent } = fake({ maxInFlight: 3 });
    const a1 = run({ key: "a", n: 1 });
    const a2 = run({ key: "a", n: 2 }); // a slot is free, but a statement holding "a" is out
    const b3 = run({ key: "b", n: 3 });
    const a4 = run({ key: "a", n: 4 });
    expect(sent.map((s) => s.ns)).toEqual([[1], [3]]);
    sent[1]?.answer.resolve(["r3"]);
    await settle();
    expect(sent).toHaveLength(2); // "a" is still out: 2 and 4 keep waiting, in order
    sent[0]?.answer.resolve(["r1"]);
    await settle();
    expect(sent.map((s) => s.ns)).toEqual([[1], [3], [2]]);
    sent[2]?.answer.resolve(["r2"]);
    await settle();
    expect(sent.map((s) => s.ns)).toEqual([[1], [3], [2], [4]]);
    sent[3]?.answer.resolve(["r4"]);
    expect(await Promise.all([a1, a2, b3, a4])).toEqual(["r1", "r2", "r3", "r4"]);
  });

  it("keeps up to maxInFlight statements out and at most maxBatch calls in one", async () => {
    const { run, sent, sizes } = fake({ maxInFlight: 2, maxBatch: 2 });
    const all = Array.from({ length: 7 }, (_, i) => run({ key: `k${i}`, n: i }));
    expect(sent.map((s) => s.ns)).toEqual([[0], [1]]);
    sent[1]?.answer.resolve(["r1"]);
    await settle();
    expect(sent.map((s) => s.ns)).toEqual([[0], [1], [2, 3]]);
    sent[0]?.answer.resolve(["r0"]);
    await settle();
    expect(sent.map((s) => s.ns)).toEqual([[0], [1], [2, 3], [4, 5]]);
    sent[2]?.answer.resolve(["r2", "r3"]);
    sent[3]?.answer.resolve(["r4", "r5"]);
    await settle();
    sent[4]?.answer.resolve(["r6"]);
    expect(await Promise.all(all)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "r6"]);
    expect(sizes).toEqual([1, 1, 2, 2, 1]);
  });

  it("runs a statement the database rolled back again call by call: one bad call fails alone", async () => {
    const { run, sent, sizes } = fake();
    const first = run({ key: "a", n: 1 });
    const rest = [run({ key: "b", n: 2 }), run({ key: "c", n: 3 }), run({ key: "d", n: 4 })].map((p) =>
      p.then(
        (v) => ({ ok: v }),
        (err: unknown) => ({ failed: (err as Error).message }),
      ),
    );
    sent[0]?.answer.resolve(["r1"]);
    await settle();
    sent[1]?.answer.reject(new Error("rolled back"));
    await settle();
    expect(sent.slice(2).map((s) => [s.kind, s.ns])).toEqual([
      ["one", [2]],
      ["one", [3]],
      ["one", [4]],
    ]);
    sent[2]?.answer.resolve(["r2"]);
    sent[3]?.answer.reject(new Error("bad value"));
    sent[4]?.answer.resolve(["r4"]);
    expect(await first).toBe("r1");
    expect(await Promise.all(rest)).toEqual([{ ok: "r2" }, { failed: "bad value" }, { ok: "r4" }]);
    expect(sizes).toEqual([1, 3, 1, 1, 1]);
  });

  it("fails every call of a statement whose outcome is unknown, and goes on with the next calls", async () => {
    const { run, sent } = fake();
    const first = run({ key: "a", n: 1 });
    const rest = [run({ key: "b", n: 2 }), run({ key: "c", n: 3 })].map((p) =>
      p.catch((err: unknown) => (err as Error).message),
    );
    sent[0]?.answer.resolve(["r1"]);
    await first;
    await settle();
    sent[1]?.answer.reject(new Error("connection lost"));
    expect(await Promise.all(rest)).toEqual(["connection lost", "connection lost"]);
    expect(sent).toHaveLength(2); // not run again: it may have been written
    const next = run({ key: "b", n: 5 });
    sent[2]?.answer.resolve(["r5"]);
    expect(await next).toBe("r5");
  });

  it("fails the calls of a statement that answers a different number of rows", async () => {
    const { run, sent } = fake();
    run({ key: "a", n: 1 });
    const rest = [run({ key: "b", n: 2 }), run({ key: "c", n: 3 })].map((p) =>
      p.catch((err: unknown) => (err as Error).message),
    );
    sent[0]?.answer.resolve(["r1"]);
    await settle();
    sent[1]?.answer.resolve(["only one"]);
    expect(await Promise.all(rest)).toEqual([
      "coalesced statement answered 1 of 2 calls",
      "coalesced statement answered 1 of 2 calls",
    ]);
  });

  it("fails a call whose statement throws before it is sent, and frees its place", async () => {
    let throws = true;
    const { run, sent } = fake({
      // Throws synchronously, as a driver may for a value it cannot encode.
      one: (c) => {
        if (throws) throw new Error(`cannot send ${c.n}`);
        return Promise.resolve(`r${c.n}`);
      },
    });
    await expect(run({ key: "a", n: 1 })).rejects.toThrow("cannot send 1");
    throws = false;
    expect(await run({ key: "a", n: 2 })).toBe("r2");
    expect(sent).toHaveLength(0);
  });

  it("refuses a limit below one", () => {
    expect(() => fake({ maxInFlight: 0 })).toThrow("maxInFlight and maxBatch");
  });
});
