import { amount, invalid, LegacyFault, oneOf, parseExact, str } from "./fields.js";
import { bulkRef, notPossible, type Operation, orderId, POS_ID_MAX, posOf } from "./ops.js";
import { ACTIVE, newEntity, setStatus } from "./state.js";
import { currentReservationView, statusView } from "./views.js";

/** Reservations (seed "Older interface"; pos-legacy §5.3, §7). Kept by OrderId apart from the PoS's slot. */

const reservationStart: Operation = (m, f) => {
  const merchantId = str(f, "MerchantId");
  const locationId = str(f, "LocationId");
  const posId = str(f, "PoSId", { max: POS_ID_MAX });
  const order = orderId(f);
  const amt = amount(f);
  const bulk = bulkRef(f);
  const captureType = oneOf(f, "CaptureType", ["Full", "Partial"] as const);
  if (amt.minor <= 0) throw invalid("Amount must be greater than 0.00");
  m.requireLocation(merchantId, locationId, 30);
  const p = m.pos(posId, 30);
  const same = m.reservations.get(order);
  if (same) m.settle(same);
  if (same?.accepted) throw new LegacyFault(40, "Reservation already exists and has been accepted");
  if ((same && ACTIVE.has(same.status)) || m.active(p))
    throw new LegacyFault(50, "Reservation already in progress");
  // Seed: ReservationStart deletes the earlier finished reservation; Done ones stay capturable by OrderId.
  const previous = p.reservationOrderId === null ? undefined : m.reservations.get(p.reservationOrderId);
  if (previous && !previous.accepted) m.reservations.delete(previous.orderId);
  if (same) m.reservations.delete(order);
  const e = newEntity(
    {
      kind: "reservation",
      orderId: order,
      posId,
      amount: amt.minor,
      bulkRef: bulk,
      customerTokenCalc: 1,
      captureType,
    },
    m.now(),
  );
  m.reservations.set(order, e);
  p.reservationOrderId = order;
  if (p.checkin) {
    m.pair(e, p.checkin.user);
    p.checkin = null;
  }
  return { CustomerToken: e.customerToken };
};

const getReservationStatus: Operation = (m, f) => {
  const order = orderId(f);
  const p = posOf(m, f, 30);
  // pos-legacy §5.3: the emulator names the field ReservationStatus (the real example's spelling).
  return statusView("ReservationStatus", p.posId, order, m.reservation(order, p.posId));
};

/**
 * pos-legacy §7 [P]: not yet 100 → deleted (reads 10); 100 → funds released (reads 40); after capture → 50.
 * Repeating the cancel of a released reservation answers 200.
 */
const reservationCancel: Operation = (m, f) => {
  const order = orderId(f);
  const p = posOf(m, f, 30);
  const r = m.reservation(order, p.posId);
  if (!r) throw notPossible("No reservation with this OrderId on this PoS");
  if (r.captured) throw notPossible("The reservation is already captured");
  if (r.released) return {};
  if (r.status === 100) {
    r.released = "cancelled";
    setStatus(r, 40, m.now());
    m.record("cancelled", order, r.amount);
    return {};
  }
  m.reservations.delete(order);
  if (p.reservationOrderId === order) p.reservationOrderId = null;
  return {};
};

/**
 * Seed "ReservationCapture" and pos-legacy §7 [P]: Full needs Amount `0.00`; Partial needs 0 < Amount ≤ the
 * reservation; only a Done (100), unreleased reservation; an identical repeat answers 200, a different one 50.
 */
const reservationCapture: Operation = (m, f) => {
  const order = orderId(f);
  const requested = parseExact("Amount", str(f, "Amount", { max: 20 }));
  bulkRef(f);
  const p = posOf(m, f, 30);
  const r = m.reservation(order, p.posId);
  if (!r) throw notPossible("No reservation with this OrderId on this PoS");
  if (r.captureType === "Full" && requested !== 0) throw invalid("Amount must be 0.00 for CaptureType Full");
  if (r.captureType === "Partial" && requested === 0)
    throw invalid("Amount must be above 0.00 for CaptureType Partial");
  if (requested > r.amount) throw invalid("Amount is larger than the reserved amount");
  if (r.captured) {
    if (r.captured.requested === requested) return {};
    throw notPossible("Error during card capture: already captured with a different amount");
  }
  if (r.status !== 100 || r.released)
    throw notPossible("Error during card capture: the reservation is not Done (100)");
  const captured = r.captureType === "Full" ? r.amount : requested;
  const now = m.now();
  r.captured = { amount: captured, requested };
  r.updatedAt = now;
  m.paid.set(order, { orderId: order, posId: p.posId, amount: captured, refunded: 0, at: now, entity: r });
  m.record("captured", order, captured);
  return {};
};

const getCurrentReservation: Operation = (m, f) => {
  const p = posOf(m, f, 10);
  const r = p.reservationOrderId === null ? undefined : m.reservations.get(p.reservationOrderId);
  return currentReservationView(p, r);
};

export const RESERVATION_OPERATIONS: Readonly<Record<string, Operation>> = {
  ReservationStart: reservationStart,
  GetReservationStatus: getReservationStatus,
  ReservationCancel: reservationCancel,
  ReservationCapture: reservationCapture,
  GetCurrentReservation: getCurrentReservation,
};
