import { randomUUID } from "node:crypto";
import type { CheckinTarget, EmuResponse, SimUser } from "../types.js";
import { errorResponse, V10Error } from "./errors.js";
import type { V10Deps } from "./machine.js";
import { accept, activePayment, finish, pair } from "./machine.js";
import type { Pos } from "./model.js";

function refuse(status: number, message: string): EmuResponse {
  return errorResponse(new V10Error(status, "1099", message), randomUUID());
}

/**
 * The app side of V10 for the user simulation (pos-v10 §10, §17): check in by beaconId, accept, reject.
 * - check-in pairs with the PoS's active payment (Initiated → IssuedToUser, Prepared → Paired) or waits as
 *   an unpaired check-in; refused (409) on a `requirePaymentBeforeCheckin` PoS without a payment (§10).
 *   A PoS with a callback alias gets its notification (§16).
 * - accept: of the payment issued to this user (an Initiated payment is paired first); Reserved after the
 *   accept delays; a `walksAway` user never accepts (200, no effect).
 * - reject: IssuedToUser or Paired → CancelledByUser.
 */
export function createV10CheckinTarget(d: V10Deps): CheckinTarget {
  const find = (beaconId: string): Pos | undefined => d.world.posByBeacon(beaconId);
  return {
    ownsBeacon: (beaconId) => find(beaconId) !== undefined,

    checkin(beaconId: string, user: SimUser): EmuResponse {
      const pos = find(beaconId);
      if (pos === undefined) return refuse(404, "no point of sale has this beaconId");
      const now = d.clock.now();
      const p = activePayment(d, pos, now);
      if (p !== null) {
        if (p.user !== null && p.user.phone !== user.phone)
          return refuse(409, "the payment is paired with another user");
        if (p.user === null) pair(p, user, now);
      } else {
        if (pos.requirePaymentBeforeCheckin)
          return refuse(409, "this point of sale requires a payment before check-in");
        pos.checkin = { user, at: now };
        d.world.checkins.add(pos);
      }
      d.notifyCheckin(pos);
      return { status: 200 };
    },

    accept(beaconId: string, user: SimUser): EmuResponse {
      const pos = find(beaconId);
      if (pos === undefined) return refuse(404, "no point of sale has this beaconId");
      const now = d.clock.now();
      const p = activePayment(d, pos, now);
      if (p === null) return refuse(409, "no payment to accept on this point of sale");
      if (p.status === "Prepared" || p.status === "Paired")
        return refuse(409, "the payment has no amount yet");
      if (p.user === null) pair(p, user, now);
      if (p.user?.phone !== user.phone) return refuse(409, "the payment is issued to another user");
      if (!user.features.includes("walksAway")) accept(d, p, now);
      return { status: 200 };
    },

    reject(beaconId: string): EmuResponse {
      const pos = find(beaconId);
      if (pos === undefined) return refuse(404, "no point of sale has this beaconId");
      const now = d.clock.now();
      const p = activePayment(d, pos, now);
      if (p === null || (p.status !== "IssuedToUser" && p.status !== "Paired")) {
        return refuse(409, "no payment issued to a user on this point of sale");
      }
      finish(d, p, "CancelledByUser", now);
      return { status: 200 };
    },
  };
}
