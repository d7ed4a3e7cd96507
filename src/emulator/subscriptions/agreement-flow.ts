/**
 * The transitions of agreements (seed 000 §States, Agreement): accepted or rejected by the user, canceled
 * by the user, merchant or system, expired while Pending; each with its callback to the agreement's links.
 */
import type { Agreement, AgreementStatus } from "./model.js";
import { stamp } from "./model.js";
import { cancelOneOff, finishOneOff, reserveOneOff } from "./oneoff-flow.js";
import { finishPayment } from "./payment-flow.js";
import { SubsConflict, type SubsState } from "./state.js";

/** Agreement callback texts and codes (seed 000 §States, Agreement). */
const AGREEMENT_CODES = {
  accepted: { status: "Accepted", text: "Agreement accepted", code: 0 },
  rejected: { status: "Rejected", text: "Agreement rejected by user", code: 40000 },
  expired: { status: "Expired", text: "Pending agreement expired", code: 40001 },
  user: { status: "Canceled", text: "Agreement canceled by user", code: 40002 },
  merchant: { status: "Canceled", text: "Agreement canceled by merchant", code: 40003 },
  system: { status: "Canceled", text: "Agreement canceled by system", code: 40004 },
} as const;

function agreementCallback(s: SubsState, a: Agreement, which: keyof typeof AGREEMENT_CODES): void {
  const c = AGREEMENT_CODES[which];
  const url = which === "accepted" ? a.links.success : a.links.cancel;
  s.deps.delivery.send(
    "agreement",
    url,
    {
      agreement_id: a.id,
      external_id: a.externalId,
      status: c.status,
      status_text: c.text,
      status_code: c.code,
      timestamp: stamp(s.now()),
    },
    a.providerId,
  );
}

function setAgreement(
  s: SubsState,
  a: Agreement,
  status: AgreementStatus,
  which: keyof typeof AGREEMENT_CODES,
): void {
  a.status = status;
  agreementCallback(s, a, which);
}

/** User accepts a Pending agreement (with a combined one-off: activated only when it is reserved). */
export function acceptAgreement(s: SubsState, a: Agreement, phone: string): void {
  if (a.status !== "Pending") throw new SubsConflict(`agreement is ${a.status}, not Pending`);
  const user = s.userState(phone);
  const oneOff = a.oneOffId === null ? undefined : s.oneOffs.get(a.oneOffId);
  if (oneOff && oneOff.status === "Requested") {
    if (user.cardFails)
      throw new SubsConflict("the card was declined: the initial one-off amount was not reserved");
    a.phone = phone;
    setAgreement(s, a, "Accepted", "accepted");
    reserveOneOff(s, oneOff, user);
    return;
  }
  a.phone = phone;
  setAgreement(s, a, "Accepted", "accepted");
}

export function rejectAgreement(s: SubsState, a: Agreement): void {
  if (a.status !== "Pending") throw new SubsConflict(`agreement is ${a.status}, not Pending`);
  setAgreement(s, a, "Rejected", "rejected");
  const oneOff = a.oneOffId === null ? undefined : s.oneOffs.get(a.oneOffId);
  if (oneOff && oneOff.status === "Requested") finishOneOff(s, oneOff, "Rejected", 50001, true);
}

/** Cancels an Accepted agreement: by the user (refused while a one-off is reserved), merchant or system. */
export function cancelAgreement(s: SubsState, a: Agreement, by: "user" | "merchant" | "system"): void {
  if (a.status !== "Accepted") throw new SubsConflict(`agreement is ${a.status}, not Active`);
  const reserved = [...s.oneOffs.values()].filter(
    (o) => o.agreementId === a.id && (o.status === "Reserved" || o.status === "Requested"),
  );
  if (by === "user" && reserved.some((o) => o.status === "Reserved"))
    throw new SubsConflict("an agreement with a reserved payment can be cancelled by the merchant only");
  setAgreement(s, a, "Canceled", by);
  for (const o of reserved) cancelOneOff(s, o);
  for (const p of s.payments.values()) {
    if (p.agreementId !== a.id) continue;
    if (p.status === "Pending" || p.status === "Suspended" || p.status === "Received")
      finishPayment(s, p, by === "user" ? "Rejected" : "Declined", 50005);
  }
}

/** A Pending agreement past its expiry: Expired, and its combined one-off with it (50008, batched). */
export function expireAgreement(s: SubsState, a: Agreement): void {
  setAgreement(s, a, "Expired", "expired");
  const o = a.oneOffId === null ? undefined : s.oneOffs.get(a.oneOffId);
  if (o && o.status === "Requested") finishOneOff(s, o, "Expired", 50008, false);
}
