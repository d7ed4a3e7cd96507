import type { Clock, Timer } from "../../../src/core/clock.js";

/**
 * Link health from the `r,ACK` flood (vending-mdb §2.5 [P]): every ACK means the VMC polled us. Silence for
 * `timeoutMs` reports the link down; the next ACK reports it up. An ACK costs one `clock.now()`: a single
 * timer is re-armed for the remaining time instead of one timer per ACK.
 */
export class LinkWatch {
  private lastAck = 0;
  private up: boolean | null = null;
  private timer: Timer | null = null;

  /**
   * @param timeoutMs silence in milliseconds before the link counts as down.
   * @param emit called on each change, with `true` for up and `false` for down.
   */
  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly emit: (up: boolean) => void,
  ) {}

  /** The current view: `null` before the first ACK or timeout after a (re)open. */
  get state(): boolean | null {
    return this.up;
  }

  /** Starts watching after a (re)open: silence is counted from now. */
  start(): void {
    this.lastAck = this.clock.now();
    this.arm(this.timeoutMs);
  }

  /** Records an ACK. */
  ack(): void {
    this.lastAck = this.clock.now();
    if (this.up !== true) {
      this.up = true;
      this.emit(true);
    }
    if (!this.timer) this.arm(this.timeoutMs);
  }

  /** The port is gone: down now, no timer until the next start. */
  lost(): void {
    this.stop();
    this.set(false);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private arm(ms: number): void {
    this.timer?.cancel();
    this.timer = this.clock.setTimer(ms, () => this.check());
  }

  private check(): void {
    this.timer = null;
    const silent = this.clock.now() - this.lastAck;
    if (silent >= this.timeoutMs) this.set(false);
    else this.arm(this.timeoutMs - silent);
  }

  private set(up: boolean): void {
    if (this.up === up) return;
    this.up = up;
    this.emit(up);
  }
}
