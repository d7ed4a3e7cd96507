import type { Minor } from "../../src/core/money.js";

/** What the customer sees on the unit's own screen, one kind per step of a vend (display.ts shows it). */
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
