/**
 * General-purpose I/O as vendd sees it: a few digital outputs (status LED, pulse line) and inputs (service
 * button, door switch, inhibit line). Implementations: `sim.ts` (in memory) and `johnny-five.ts` (johnny-five
 * with the IO plugin the board profile names, imported lazily).
 *
 * Failure semantics:
 * - `open` rejects with a `GpioError` (`unavailable`) when the library, the plugin or the board cannot be
 *   reached; nothing else in this interface throws for I/O trouble.
 * - `write` is fire-and-forget: after a failure the port logs and keeps accepting writes (a stuck LED must
 *   never block money). It throws `GpioError` (`closed`) only when called before `open` or after `close`.
 * - Input listeners are called on every level change, never for a repeated level, in the order reported.
 * - Pins are named as the IO plugin names them: BCM numbers or `"GPIO17"` on a Pi, numbers on Firmata.
 */
export interface GpioPort {
  readonly kind: GpioKind;
  open(): Promise<void>;
  /** Drives an output pin: `high` true puts the pin at logic 1 (the wiring decides what that means). */
  write(pin: GpioPin, high: boolean): void;
  /** The last level reported for an input pin, or null before its first report. */
  read(pin: GpioPin): boolean | null;
  /**
   * Configures `pin` as an input (with the pull-up enabled when `pullUp` is true, for switches to ground)
   * and calls `listener` with each new level. Returns the unsubscribe function.
   */
  onInput(pin: GpioPin, listener: (high: boolean) => void, opts?: { pullUp?: boolean }): () => void;
  close(): Promise<void>;
}

export type GpioKind = "sim" | "johnny-five";

export type GpioPin = number | string;

export class GpioError extends Error {
  override readonly name = "GpioError";
  constructor(
    readonly code: "unavailable" | "closed" | "config",
    message: string,
  ) {
    super(message);
  }
}
