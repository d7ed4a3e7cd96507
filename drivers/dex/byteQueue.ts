/**
 * Bytes from the port, read one at a time with a timeout on the injected clock. Bounded: a machine that
 * floods the line loses the oldest bytes past `maxBytes` (the session then fails its CRC or times out).
 */
import type { Clock, Timer } from "../../src/core/clock.js";

export class ByteQueue {
  private buf: Buffer = Buffer.alloc(0);
  private waiter: { resolve: (b: number | null) => void; timer: Timer } | null = null;
  /** Called with every chunk while nobody is reading (the reader listens for a machine's own ENQ). */
  onIdleData: ((chunk: Buffer) => void) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly maxBytes = 64 * 1024,
  ) {}

  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    if (this.buf.length > this.maxBytes) this.buf = this.buf.subarray(this.buf.length - this.maxBytes);
    const w = this.waiter;
    if (w && this.buf.length > 0) {
      this.waiter = null;
      w.timer.cancel();
      w.resolve(this.take());
    } else if (!w) this.onIdleData?.(chunk);
  }

  private take(): number | null {
    const b = this.buf[0];
    if (b === undefined) return null;
    this.buf = this.buf.subarray(1);
    return b;
  }

  /** The next byte, or null when none came within `timeoutMs`. One reader at a time. */
  next(timeoutMs: number): Promise<number | null> {
    if (this.stopped) return Promise.resolve(null);
    const b = this.take();
    if (b !== null) return Promise.resolve(b);
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(timeoutMs, () => {
        if (this.waiter?.timer !== timer) return;
        this.waiter = null;
        resolve(null);
      });
      this.waiter = { resolve, timer };
    });
  }

  /** Bytes waiting. */
  get size(): number {
    return this.buf.length;
  }

  private stopped = false;

  /** Makes every read return null at once (the session's time is up) until `clear`. */
  stop(): void {
    this.stopped = true;
    const w = this.waiter;
    this.waiter = null;
    w?.timer.cancel();
    w?.resolve(null);
  }

  /** Forgets what is waiting (after an abort) and reads again. */
  clear(): void {
    this.buf = Buffer.alloc(0);
    this.stopped = false;
  }
}
