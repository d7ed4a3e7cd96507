import type { CheckinTarget, EmuResponse, SimUser } from "../types.js";
import type { LegacyModel } from "./model.js";
import { setStatus } from "./state.js";

/**
 * The user-simulation side of the older interface (pos-legacy §9): a user checks in on a PoSUnitId, then
 * accepts or rejects the entity issued to them. Answers `200` with an empty body, `404` for an unknown
 * unit, `409` when the PoS has nothing the call could act on.
 */
export function createCheckinTarget(m: LegacyModel): CheckinTarget {
  const conflict = (message: string): EmuResponse => ({ status: 409, body: { code: "conflict", message } });
  const unknown: EmuResponse = { status: 404, body: { code: "notFound", message: "unknown PoSUnitId" } };

  return {
    ownsBeacon: (beaconId) => m.posByUnit(beaconId) !== undefined,

    checkin(beaconId: string, user: SimUser): EmuResponse {
      const p = m.posByUnit(beaconId);
      if (!p) return unknown;
      m.settlePos(p);
      const e = m.active(p);
      // pos-legacy §6: a payment waiting in AwaitCheckIn (30) is issued now; else the check-in waits.
      if (e && e.status === 30) m.pair(e, user);
      else p.checkin = { user, at: m.now() };
      return { status: 200 };
    },

    accept(beaconId: string, user: SimUser): EmuResponse {
      const p = m.posByUnit(beaconId);
      if (!p) return unknown;
      m.settlePos(p);
      const e = m.active(p);
      if (e?.status !== 20) return conflict("no payment is issued on this unit");
      if (e.user?.phone !== user.phone) return conflict("the payment is issued to another user");
      const now = m.now();
      if (user.features.includes("insufficientFunds")) {
        // Seed status 50: the service cannot handle the payment.
        setStatus(e, 50, now);
        return { status: 200 };
      }
      e.accepted = true;
      e.confirmAt = now + m.timing.acceptToDoneMs;
      setStatus(e, 80, now);
      m.settle(e);
      return { status: 200 };
    },

    reject(beaconId: string): EmuResponse {
      const p = m.posByUnit(beaconId);
      if (!p) return unknown;
      m.settlePos(p);
      const e = m.active(p);
      if (!e || (e.status !== 20 && e.status !== 60)) return conflict("no payment is issued on this unit");
      // Seed status 40: customer cancelled or rejected.
      setStatus(e, 40, m.now());
      return { status: 200 };
    },
  };
}
