/**
 * The transitions of one-off payments (seed 000 §States, One-off payment): requested (reserved at once with
 * auto_reserve), accepted or rejected by the user, captured or cancelled by the merchant, expired; with their
 * callbacks and the reservation, capture and release entries of the ledger.
 */
import { amountToJson, type Minor } from "../../core/money.js";
import { dateOf, type OneOff, RESERVATION_LIFE_MS, type SubsUserState } from "./model.js";
import { PAYMENT_TEXTS } from "./payment-flow.js";
import { SubsConflict, type SubsState } from "./state.js";

function oneOffBody(s: SubsState, o: OneOff, code: number, status: string): Record<string, unknown> {
  const a = s.agreements.get(o.agreementId);
  return {
    agreement_id: o.agreementId,
    payment_id: o.id,
    amount: amountToJson(o.amount),
    currency: a?.currency ?? "DKK",
    payment_date: dateOf(s.now()),
    status,
    status_text: code === 0 ? "Payment successfully reserved." : (PAYMENT_TEXTS[code] ?? null),
    status_code: code,
    external_id: o.externalId,
    payment_type: "OneOff",
  };
}

/** One-off callbacks go out at once (Reserved, Rejected, 50013) as a one-element array. */
function oneOffNow(s: SubsState, o: OneOff, code: number, status: string): void {
  const p = s.providers.get(o.providerId);
  if (p?.callbackUrl)
    s.deps.delivery.send("oneoff", p.callbackUrl, [oneOffBody(s, o, code, status)], o.providerId);
}

/** A one-off requested on an Active agreement: with auto_reserve the emulator tries at once. */
export function requestOneOff(s: SubsState, o: OneOff): void {
  s.oneOffs.set(o.id, o);
  const a = s.agreements.get(o.agreementId);
  if (!o.autoReserve || a?.status !== "Accepted" || a.phone === null) return;
  const user = s.userState(a.phone);
  if (user.cardFails) oneOffNow(s, o, 50013, "Requested");
  else reserveOneOff(s, o, user);
}

export function reserveOneOff(s: SubsState, o: OneOff, user: SubsUserState): void {
  o.status = "Reserved";
  o.expiresAt = s.now() + RESERVATION_LIFE_MS;
  o.instantTransfer = user.instantTransfer;
  ledgerOneOff(s, o, "reserved", o.amount);
  oneOffNow(s, o, 0, "Reserved");
}

function ledgerOneOff(
  s: SubsState,
  o: OneOff,
  kind: "reserved" | "captured" | "cancelled" | "expired",
  amount: Minor,
): void {
  s.deps.ledger.record({
    interface: "subscriptions",
    id: o.id,
    paymentId: null,
    orderId: o.externalId,
    kind,
    amount,
    currency: s.agreements.get(o.agreementId)?.currency ?? "DKK",
    merchant: s.merchantOf(o.providerId)?.vat,
    point: o.providerId,
  });
}

/** User accepts a Requested one-off (its agreement must be Active). */
export function acceptOneOff(s: SubsState, o: OneOff): void {
  if (o.status !== "Requested") throw new SubsConflict(`one-off payment is ${o.status}, not Requested`);
  const a = s.agreements.get(o.agreementId);
  if (a?.status !== "Accepted" || a.phone === null)
    throw new SubsConflict("accept the agreement itself: this one-off belongs to a Pending agreement");
  const user = s.userState(a.phone);
  if (user.cardFails) throw new SubsConflict("the card was declined");
  reserveOneOff(s, o, user);
}

export function rejectOneOff(s: SubsState, o: OneOff): void {
  if (o.status !== "Requested") throw new SubsConflict(`one-off payment is ${o.status}, not Requested`);
  finishOneOff(s, o, "Rejected", 50001, true);
}

/** Ends a one-off as Rejected or Expired; its callback goes out at once (`now`) or with the next batch. */
export function finishOneOff(
  s: SubsState,
  o: OneOff,
  status: "Rejected" | "Expired",
  code: number,
  now: boolean,
): void {
  const wasReserved = o.status === "Reserved";
  o.status = status;
  if (wasReserved) ledgerOneOff(s, o, "expired", o.amount);
  if (now) oneOffNow(s, o, code, status);
  else s.deps.delivery.enqueue({ providerId: o.providerId, body: oneOffBody(s, o, code, status) });
}

/** Merchant capture: once, of a Reserved one-off, not above the reserved amount. */
export function captureOneOff(s: SubsState, o: OneOff, amount: Minor | null): void {
  if (o.status === "Captured") throw new SubsConflict("the one-off payment is already captured");
  if (o.status !== "Reserved") throw new SubsConflict(`one-off payment is ${o.status}, not Reserved`);
  const take = amount ?? o.amount;
  if (take > o.amount) throw new SubsConflict("capture above the reserved amount");
  if (take === 0) throw new SubsConflict("capture amount must be above 0.00");
  o.status = "Captured";
  o.captured = take;
  o.executedAt = s.now();
  ledgerOneOff(s, o, "captured", take);
}

/** Merchant cancel of a one-off not yet captured nor expired. */
export function cancelOneOff(s: SubsState, o: OneOff): void {
  if (o.status !== "Requested" && o.status !== "Reserved")
    throw new SubsConflict(
      `one-off payment is ${o.status}: only a Requested or Reserved one can be cancelled`,
    );
  if (o.status === "Reserved") ledgerOneOff(s, o, "cancelled", o.amount);
  o.status = "Cancelled";
}
