import type { Minor } from "../../core/money.js";
import type { SimUser } from "../types.js";

/**
 * State records of the older-interface model. Status values are the seed's ("Older interface: payment
 * status values"); 10 (Idle) is never stored, it is what an absent entity reads as (pos-legacy §6).
 */
export type StoredStatus = 20 | 30 | 40 | 50 | 60 | 80 | 100;
export type Status = 10 | StoredStatus;

/** Active statuses: the entity blocks a new start on its PoS (seed rules of PaymentStart/ReservationStart). */
export const ACTIVE: ReadonlySet<Status> = new Set<Status>([20, 30, 60, 80]);

/** A payment (PaymentStart) or a reservation (ReservationStart). */
export interface Entity {
  kind: "payment" | "reservation";
  orderId: string;
  posId: string;
  /** Minor units. */
  amount: Minor;
  bulkRef: string;
  status: StoredStatus;
  /** When the current status was entered, ms (emulator time). */
  since: number;
  /** Last change of any field, ms. */
  updatedAt: number;
  /** Payments: 0 = loyalty flow for members, 1 = ignore loyalty. */
  customerTokenCalc: 0 | 1;
  /** Reservations only. */
  captureType: "Full" | "Partial" | null;
  user: SimUser | null;
  transactionId: string | null;
  customerId: string | null;
  customerToken: string | null;
  customerReceiptToken: string | null;
  /** Set when the user accepted (80 reached); "reservation already exists and has been accepted". */
  accepted: boolean;
  /** Emulator time at which 80 becomes 100, ms. */
  confirmAt: number | null;
  /** Emulator time of 100, ms. */
  doneAt: number | null;
  /** Reservations: the captured amount (minor) and the Amount the capture request sent (for repeats). */
  captured: { amount: Minor; requested: Minor } | null;
  /** Reservations in 100 whose funds were released: by ReservationCancel or the 7-day rule. */
  released: "cancelled" | "expired" | null;
}

export interface PosRecord {
  posId: string;
  name: string;
  unitId: string | null;
  /** The PoS's payment entity (one slot; a finished one stays until the next PaymentStart). */
  payment: Entity | null;
  /** OrderId of the PoS's current reservation (the entity lives in the model's reservation map). */
  reservationOrderId: string | null;
  /** A user checked in and not yet paired with an entity. */
  checkin: { user: SimUser; at: number } | null;
}

/** A Done payment or a captured reservation, refundable by OrderId for 3 months (seed "PaymentRefund"). */
export interface PaidOrder {
  orderId: string;
  posId: string;
  /** Minor units paid or captured. */
  amount: Minor;
  /** Minor units refunded so far. */
  refunded: Minor;
  /** Emulator time of payment or capture, ms. */
  at: number;
  /** The payment or reservation it came from (status reads after a later start replaced the slot). */
  entity: Entity;
}

/** Emulator timing rules, ms. */
export interface LegacyTiming {
  /** 20/30/60 not accepted within this → 40 (pos-legacy §6 [P], default 300 s). */
  acceptTimeoutMs: number;
  /** A reservation in 100 neither captured nor cancelled is released after this (§7 [P], default 7 days). */
  releaseMs: number;
  /** From the user's accept (80) to Done (100); 0 = at once (default 0). */
  acceptToDoneMs: number;
  /** A check-in not paired with an entity ends after this (pos-v10 §10 lifecycle, default 120 s). */
  checkinMs: number;
}

export const DEFAULT_TIMING: LegacyTiming = {
  acceptTimeoutMs: 300_000,
  releaseMs: 7 * 24 * 3600_000,
  acceptToDoneMs: 0,
  checkinMs: 120_000,
};

export function newEntity(
  init: Pick<
    Entity,
    "kind" | "orderId" | "posId" | "amount" | "bulkRef" | "customerTokenCalc" | "captureType"
  >,
  now: number,
): Entity {
  return {
    ...init,
    status: 30,
    since: now,
    updatedAt: now,
    user: null,
    transactionId: null,
    customerId: null,
    customerToken: null,
    customerReceiptToken: null,
    accepted: false,
    confirmAt: null,
    doneAt: null,
    captured: null,
    released: null,
  };
}

export function setStatus(e: Entity, status: StoredStatus, now: number): void {
  e.status = status;
  e.since = now;
  e.updatedAt = now;
}
