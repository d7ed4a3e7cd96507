/**
 * Calls that become one statement when they queue up (unitStatementsPostgres.ts: PostgreSQL heartbeats). While fewer than
 * `maxInFlight` statements are out, a call is sent at once on its own, so an idle fleet adds no wait. Beyond
 * that, calls wait; when a statement returns, the waiting ones go together, up to `maxBatch`, as one
 * statement. Under a burst (a stalled moment, a thousand units reconnecting) the database then parses,
 * plans, locks and commits once for many calls instead of once for each, and the process sends one message
 * instead of many, so the backlog drains in a fraction of the time.
 *
 * Calls with the same `key` never share a statement: each statement's rows must be independent (a unit's
 * row is updated once per statement). Nor are two of them out at once: a call waits, in order, while a
 * statement holding its key is out. So one key's calls reach the database one after another, in the order
 * they were made (a replayed nonce is the later call's to be refused, a unit's later heartbeat is the one
 * its row keeps), however the database happens to schedule two statements that are out together.
 *
 * A statement that failed with an error proving it wrote nothing (`wroteNothing`: the database rolled it back)
 * is run again call by call, so one call's bad value does not fail the others. Any other error (the
 * connection lost: the outcome unknown) fails every call in it, as it would have failed each alone.
 */
export interface CoalesceOptions<P, R> {
  /** Statements out at once; calls beyond them wait and are sent together. */
  maxInFlight: number;
  /** The most calls in one statement. */
  maxBatch: number;
  /** Calls with the same key are never in one statement, nor out at once. */
  key(call: P): string;
  /** One call alone. */
  one(call: P): Promise<R>;
  /** Two or more calls (distinct keys) in one statement: their answers in the same order. */
  many(calls: readonly P[]): Promise<R[]>;
  /** Whether a failed `many` certainly wrote nothing, so its calls may be run again one by one. */
  wroteNothing(err: unknown): boolean;
  /** Told the size of every statement sent (1 for a call alone), for tests and diagnostics. */
  onSend?(size: number): void;
}

interface Waiting<P, R> {
  call: P;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export function coalescer<P, R>(opts: CoalesceOptions<P, R>): (call: P) => Promise<R> {
  if (!(opts.maxInFlight >= 1 && opts.maxBatch >= 1))
    throw new Error("coalescer: maxInFlight and maxBatch ≥ 1");
  let queue: Waiting<P, R>[] = [];
  let inFlight = 0;
  /** The keys of the calls in the statements out. */
  const busy = new Set<string>();

  /**
   * The oldest waiting calls with distinct keys that no statement out holds, up to maxBatch; the rest stay
   * queued in order.
   */
  const take = (): Waiting<P, R>[] => {
    const batch: Waiting<P, R>[] = [];
    const keys = new Set<string>();
    const rest: Waiting<P, R>[] = [];
    for (const w of queue) {
      const k = opts.key(w.call);
      if (batch.length < opts.maxBatch && !keys.has(k) && !busy.has(k)) {
        keys.add(k);
        batch.push(w);
      } else rest.push(w);
    }
    queue = rest;
    return batch;
  };

  const alone = async (w: Waiting<P, R>): Promise<void> => {
    try {
      w.resolve(await opts.one(w.call));
    } catch (err) {
      w.reject(err);
    }
  };

  const send = async (batch: Waiting<P, R>[]): Promise<void> => {
    opts.onSend?.(batch.length);
    const [first] = batch;
    if (batch.length === 1 && first !== undefined) return alone(first);
    let answers: R[];
    try {
      answers = await opts.many(batch.map((w) => w.call));
    } catch (err) {
      if (!opts.wroteNothing(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      await Promise.all(
        batch.map((w) => {
          opts.onSend?.(1);
          return alone(w);
        }),
      );
      return;
    }
    if (answers.length !== batch.length) {
      const err = new Error(`coalesced statement answered ${answers.length} of ${batch.length} calls`);
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      w.resolve(answers[i] as R);
    });
  };

  const pump = (): void => {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      const batch = take();
      // Every waiting call's key is out: they go when its statement returns.
      if (batch.length === 0) return;
      const keys = batch.map((w) => opts.key(w.call));
      for (const k of keys) busy.add(k);
      inFlight += 1;
      // A settled call ignores a second answer: this only reaches calls that none reached yet.
      void send(batch)
        .catch((err: unknown) => {
          for (const w of batch) w.reject(err);
        })
        .finally(() => {
          inFlight -= 1;
          for (const k of keys) busy.delete(k);
          pump();
        });
    }
  };

  return (call) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ call, resolve, reject });
      pump();
    });
}
