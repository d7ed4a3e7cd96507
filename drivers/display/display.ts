import type { Minor } from "../../src/core/money.js";

/**
 * What the customer sees on the unit's own screen. Implementations: a terminal (qrcode-terminal on standard
 * output or a tty device such as the board's small screen), and `sim`, which records screens.
 *
 * Failure semantics: `show` never throws and never blocks money: a display that cannot be written logs the
 * error once and keeps the last screen. Redraws happen only when the screen changes.
 */
export interface CheckinDisplay {
  readonly kind: DisplayKind;
  show(screen: Screen): void;
  close(): Promise<void>;
}

export type DisplayKind = "terminal" | "sim" | "none";

export type Screen =
  | { kind: "idle"; checkinUri: string | null; message: string }
  /**
   * Selection first: the vend's price while its payment is being created at the service. No QR code: a
   * customer who scanned now would find nothing to pay (the `pay` screen follows once the payment exists).
   */
  | { kind: "connecting"; amount: Minor; currency: string; item: number | null }
  | { kind: "pay"; amount: Minor; currency: string; checkinUri: string; item: number | null }
  | { kind: "approveInApp"; amount: Minor; currency: string }
  | { kind: "vending"; amount: Minor; currency: string }
  /** Check-in first: funds reserved; the customer chooses products up to `available`. */
  | { kind: "session"; available: Minor; currency: string }
  | { kind: "thankYou"; amount: Minor; currency: string }
  | { kind: "cancelled"; reason: string }
  | { kind: "outOfService"; reason: string };

/** The check-in payload (pos-v10 §15): all lowercase, carries the beaconId, never the posId. */
export function checkinUri(scheme: string, beaconId: string): string {
  return `${scheme}://pos?id=${beaconId}&source=qr`.toLowerCase();
}
