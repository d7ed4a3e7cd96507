import type { SettleAction } from "../journal/journal.js";
import type { JournalSnapshot } from "../journal/snapshot.js";

/**
 * One money movement at the payment service, as the checker needs it. Structural, so the emulator's
 * `LedgerEntry` (and later the service's transaction report, seed 002) satisfies it without production
 * code importing the emulator.
 */
export interface LedgerRecord {
  /** The payment's id (V10 paymentId, older interface OrderId); for a V10 refund, the refund's own id. */
  id: string;
  /** For refunds, the payment they belong to. */
  paymentId: string | null;
  orderId: string;
  kind: "reserved" | "paid" | "captured" | "cancelled" | "expired" | "refunded";
  amount: number;
}

/** One approval the VMC received: its session and vend request (counted by the VMC), item, price, amount. */
export interface VmcApproval {
  /** The VMC's own ordinal of the session the vend was requested in. */
  session: number;
  /** The VMC's own ordinal of the vend request the approval answers. */
  request: number;
  item: number;
  price: number;
  amount: number;
}

/**
 * What the VMC did with one vend request, as the machine reports it: `success`/`failure` reported after an
 * approval, `undispensed` approved but reset before it could report, `denied` never approved, `skipped`
 * never requested. `request` is the VMC's ordinal of the request (absent when it was never made).
 */
export interface VmcVendReport {
  request?: number;
  item: number;
  price: number;
  outcome: "success" | "failure" | "undispensed" | "denied" | "skipped";
}

/** The machine's side: approvals it received, what it reported, and protocol violations it saw. */
export interface VmcRecord {
  approvals: readonly VmcApproval[];
  vends: readonly VmcVendReport[];
  violations: readonly string[];
}

/** Everything the consistency checker compares. */
export interface ConsistencyInput {
  journal: JournalSnapshot;
  /** The unit's own money movements at the service. */
  ledger: readonly LedgerRecord[];
  /** The unit's `engine.unknownOutcome`: what an approved vend with an unknown outcome costs. */
  policy: SettleAction;
  /** The VMC's record, where there is one (the chaos rig's simulator); without it the VMC side is not checked. */
  vmc?: VmcRecord;
  /**
   * The unit keeps an idle payment initiated (check-in first, older interface): its idle session (see
   * `isIdleSession`) is the unit's rest state, not a lost session, and is left out of the checks.
   */
  idlePayment?: boolean;
}

/** The result: readable problems (empty when consistent) and counts of the sessions by result. */
export interface ConsistencyReport {
  consistent: boolean;
  problems: string[];
  /** Sessions checked (idle sessions left out). */
  sessions: number;
  captured: number;
  cancelled: number;
  denied: number;
  /** Money the service holds for the unit's captured sessions, minor units. */
  capturedAmount: number;
}
