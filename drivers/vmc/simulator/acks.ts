/**
 * Emits `r,ACK` lines at a steady average rate (the VMC polls every 25–200 ms, vending-mdb §1.1; a fast
 * rate stresses the driver's flood filter). Lines are batched per 10 ms tick, as a USB adapter would
 * deliver them, and the count follows elapsed time so timer jitter does not change the rate.
 */
const TICK_MS = 10;

export class AckTicker {
  private timer: ReturnType<typeof setInterval> | null = null;
  private startedAt = 0;
  private sent = 0;
  private rate = 0;

  /**
   * @param perSecond initial rate in lines per second (0 = silent).
   * @param emit sends `n` ACK lines.
   */
  constructor(
    perSecond: number,
    private readonly emit: (n: number) => void,
  ) {
    this.setRate(perSecond);
  }

  /** Changes the rate (lines per second, ≥ 0); 0 stops the flood. */
  setRate(perSecond: number): void {
    this.stop();
    this.rate = Math.max(0, perSecond);
    if (this.rate === 0) return;
    this.startedAt = performance.now();
    this.sent = 0;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private tick(): void {
    const due = Math.floor(((performance.now() - this.startedAt) * this.rate) / 1000) - this.sent;
    // Bounded batch: after a long stall (debugger, loaded CI) do not dump seconds of ACKs at once.
    const n = Math.min(due, Math.ceil(this.rate / 10));
    if (n <= 0) return;
    this.sent += due;
    this.emit(n);
  }
}
