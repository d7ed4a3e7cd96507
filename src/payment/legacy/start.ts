import { formatAmount } from "../../core/money.js";
import type { PaymentRef, StartRequest } from "../driver.js";
import { isPaymentError, PaymentError } from "../errors.js";
import { type LegacyContext, posKey, queryStatus, rememberCaptureType, waitToRepeat } from "./context.js";
import { ACTIVE_STATUSES, integer, text } from "./read.js";
import { paymentStartHmac, SigningError } from "./signing.js";

/** Seed "OrderId": at most 32 characters. */
const ORDER_ID_MAX = 32;

/**
 * Starts a reservation (ReservationStart) or a direct payment (PaymentStart), with the recovery rules of
 * pos-legacy §10 (busy PoS) and §11 (lost response: query before repeating).
 */
export async function startPayment(
  c: LegacyContext,
  req: StartRequest,
  signal?: AbortSignal,
): Promise<PaymentRef> {
  const mode = req.mode ?? "reservation";
  const ref: PaymentRef = {
    id: req.orderId,
    orderId: req.orderId,
    mode,
    ...(mode === "reservation" ? { captureType: req.captureType ?? c.o.captureType } : {}),
  };
  if (req.orderId === "" || req.orderId.length > ORDER_ID_MAX) {
    throw new PaymentError("invalid", `start: OrderId must be 1-${ORDER_ID_MAX} characters`);
  }
  if (!Number.isSafeInteger(req.amount) || req.amount <= 0)
    throw new PaymentError("invalid", "start: amount must be > 0");
  if (mode === "reservation") rememberCaptureType(c, req.orderId, req.captureType ?? c.o.captureType);
  const fields = startFields(c, ref, req.amount);
  try {
    await createOrRecover(c, ref, fields, signal);
    return ref;
  } catch (e) {
    if (!isPaymentError(e, "busy")) throw e;
  }
  // pos-legacy §10: another entity blocks the PoS. Ours (a lost start) → done; the journal's → busy;
  // a stranger's → cancel it and start once more (not in a loop).
  if ((await clearBusy(c, ref, signal)) === "ours") return ref;
  await createOrRecover(c, ref, fields, signal);
  return ref;
}

type StartCall = { op: "PaymentStart" | "ReservationStart"; body: Record<string, unknown> };

function startFields(c: LegacyContext, ref: PaymentRef, amount: number): StartCall {
  const base = { ...posKey(c), OrderId: ref.orderId, Amount: formatAmount(amount), BulkRef: c.o.bulkRef };
  if (ref.mode === "reservation") {
    const type = c.captureTypes.get(ref.orderId) ?? c.o.captureType;
    return { op: "ReservationStart", body: { ...base, CaptureType: type === "full" ? "Full" : "Partial" } };
  }
  let hmac: string;
  try {
    hmac = paymentStartHmac(c.merchantKey, {
      merchantId: base.MerchantId,
      locationId: base.LocationId,
      posId: base.PoSId,
      orderId: base.OrderId,
      amount: base.Amount,
      bulkRef: base.BulkRef,
    });
  } catch (e) {
    if (e instanceof SigningError)
      throw new PaymentError("invalid", `PaymentStart: ${e.message}`, {}, { cause: e });
    throw e;
  }
  // pos-legacy §12: CustomerTokenCalc 1, a vending machine cannot recalculate a price.
  return { op: "PaymentStart", body: { ...base, Action: "Start", CustomerTokenCalc: 1, HMAC: hmac } };
}

/**
 * Sends the start; after a lost answer, queries the status and sends again only when it reads 10 (§11),
 * at most `LIMITS.legacySends` sends in all (retry.ts decides the repeat and its jittered wait).
 */
async function createOrRecover(
  c: LegacyContext,
  ref: PaymentRef,
  s: StartCall,
  signal?: AbortSignal,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await c.t.call(s.op, s.body, signal);
      return;
    } catch (e) {
      if (!(e instanceof PaymentError)) throw e;
      // A repeat answered 50 while our order now exists means an earlier send was applied after all.
      if (attempt > 1 && e.code === "busy") {
        if ((await queryStatus(c, ref, signal)) !== 10) return;
        throw e;
      }
      if (!e.ambiguous) throw e;
      c.log?.warn({ orderId: ref.orderId, op: s.op }, "start answer lost; querying status before repeating");
      if ((await queryStatus(c, ref, signal)) !== 10) return;
      if (!(await waitToRepeat(c, attempt, e, signal))) throw e;
    }
  }
}

interface CurrentEntity {
  mode: PaymentRef["mode"];
  orderId: string;
}

/** The PoS's active entities (GetCurrentPayment and GetCurrentReservation). */
export async function currentActive(c: LegacyContext, signal?: AbortSignal): Promise<CurrentEntity[]> {
  const out: CurrentEntity[] = [];
  const reads = [
    ["payment", "GetCurrentPayment"],
    ["reservation", "GetCurrentReservation"],
  ] as const;
  for (const [mode, op] of reads) {
    const body = await c.t.call(op, posKey(c), signal);
    const status = integer(body, "PaymentStatus", op);
    const orderId = text(body, "OrderId", op);
    if (status !== null && ACTIVE_STATUSES.has(status) && orderId !== null) out.push({ mode, orderId });
  }
  return out;
}

async function clearBusy(
  c: LegacyContext,
  ref: PaymentRef,
  signal?: AbortSignal,
): Promise<"ours" | "cleared"> {
  const active = await currentActive(c, signal);
  if (active.some((a) => a.orderId === ref.orderId && a.mode === ref.mode)) return "ours";
  const owned = active.find((a) => c.o.ownsOrder(a.orderId));
  if (owned) {
    throw new PaymentError(
      "busy",
      `start: the PoS is busy with order ${owned.orderId} of this unit's journal`,
      {
        serviceCode: "50",
      },
    );
  }
  for (const a of active) {
    c.log?.warn({ orderId: a.orderId, mode: a.mode }, "cancelling a stranger's entity that blocks the PoS");
    const op = a.mode === "payment" ? "PaymentCancel" : "ReservationCancel";
    const body = a.mode === "payment" ? posKey(c) : { ...posKey(c), OrderId: a.orderId };
    try {
      await c.t.call(op, body, signal);
    } catch (e) {
      // It may have finished meanwhile; the repeated start tells.
      if (!isPaymentError(e, "conflict")) throw e;
    }
  }
  return "cleared";
}
