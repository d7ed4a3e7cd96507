import { DAY_MS } from "../../core/days.js";
import type { EmuClock, EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import { acceptAgreement, cancelAgreement, rejectAgreement } from "./agreement-flow.js";
import { bool, int, obj, parseJson, SubsInputError, str } from "./codec.js";
import type { SubsDelivery } from "./delivery.js";
import { at, dateOf } from "./model.js";
import { acceptOneOff, rejectOneOff } from "./oneoff-flow.js";
import { rejectPayment } from "./payment-flow.js";
import { SubsConflict, type SubsState } from "./state.js";

/** User simulation of the subscriptions interface (the app user's side). */
export const SIM_PREFIX = "/app/subscriptions/";
/** Admin of the subscriptions interface (no authentication; never subject to faults). */
export const SUBS_ADMIN_PREFIX = "/_admin/subscriptions/";

function answer(run: () => EmuResponse): EmuResponse {
  try {
    return run();
  } catch (e: unknown) {
    if (e instanceof SubsInputError) return { status: 400, body: { error: e.message } };
    if (e instanceof SubsConflict) return { status: 409, body: { error: e.message } };
    throw e;
  }
}

function body(req: EmuRequest): Record<string, unknown> {
  return req.body.length === 0 ? {} : obj(parseJson(req.body), "body");
}

/**
 * `POST /app/subscriptions/...`: accept or reject agreements and one-off payments, cancel an agreement,
 * reject a pending payment, and set a user's card and status; `/_admin/subscriptions/...`: advance to a
 * time of day, read callbacks, arm core-system refusals, cancel by system.
 */
export class SubsSimulation implements InterfaceHandler {
  constructor(
    private readonly s: SubsState,
    private readonly delivery: SubsDelivery,
    private readonly clock: EmuClock,
    private readonly knownPhone: (phone: string) => boolean,
  ) {}

  async handle(req: EmuRequest): Promise<EmuResponse | null> {
    if (req.path.startsWith(SIM_PREFIX))
      return answer(() => this.sim(req, req.path.slice(SIM_PREFIX.length)));
    if (req.path.startsWith(SUBS_ADMIN_PREFIX))
      return answer(() => this.admin(req, req.path.slice(SUBS_ADMIN_PREFIX.length)));
    return null;
  }

  private sim(req: EmuRequest, path: string): EmuResponse {
    if (req.method !== "POST") return { status: 405, headers: { allow: "POST" } };
    const b = body(req);
    let m = /^agreements\/([^/]+)\/(accept|reject|cancel)$/.exec(path);
    if (m?.[1] && m[2]) {
      const a = this.s.agreements.get(m[1]);
      if (a === undefined) return { status: 404, body: { error: "no such agreement" } };
      if (m[2] === "accept") {
        const phone = str(b.phoneNumber, "phoneNumber");
        if (!this.knownPhone(phone)) throw new SubsInputError("phoneNumber is not a simulated app user");
        acceptAgreement(this.s, a, phone);
      } else if (m[2] === "reject") rejectAgreement(this.s, a);
      else cancelAgreement(this.s, a, "user");
      return { status: 200, body: { id: a.id, status: a.status } };
    }
    m = /^oneoffpayments\/([^/]+)\/(accept|reject)$/.exec(path);
    if (m?.[1] && m[2]) {
      const o = this.s.oneOffs.get(m[1]);
      if (o === undefined) return { status: 404, body: { error: "no such one-off payment" } };
      if (m[2] === "accept") acceptOneOff(this.s, o);
      else rejectOneOff(this.s, o);
      return { status: 200, body: { id: o.id, status: o.status } };
    }
    m = /^payments\/([^/]+)\/reject$/.exec(path);
    if (m?.[1]) {
      const p = this.s.payments.get(m[1]);
      if (p === undefined) return { status: 404, body: { error: "no such payment" } };
      rejectPayment(this.s, p);
      return { status: 200, body: { id: p.id, status: p.status } };
    }
    if (path === "user") {
      const phone = str(b.phoneNumber, "phoneNumber");
      if (!this.knownPhone(phone)) throw new SubsInputError("phoneNumber is not a simulated app user");
      const u = this.s.userState(phone);
      if (b.cardFails !== undefined) u.cardFails = bool(b.cardFails, "cardFails");
      if (b.blocked !== undefined) u.blocked = bool(b.blocked, "blocked");
      if (b.instantTransfer !== undefined) u.instantTransfer = bool(b.instantTransfer, "instantTransfer");
      if (b.deleted !== undefined && bool(b.deleted, "deleted")) {
        for (const a of this.s.agreements.values())
          if (a.phone === phone && a.status === "Accepted") cancelAgreement(this.s, a, "system");
      }
      return { status: 200, body: { phoneNumber: phone, ...u } };
    }
    return { status: 404, body: { error: "no such user-simulation route" } };
  }

  private admin(req: EmuRequest, path: string): EmuResponse {
    if (path === "callbacks" && req.method === "GET") {
      const list = this.delivery.list();
      return {
        status: 200,
        body: {
          delivered: list.filter((d) => d.status === "delivered"),
          pending: list.filter((d) => d.status === "pending"),
          failed: list.filter((d) => d.status === "failed"),
          batched: this.delivery.pendingEvents(),
          nextBatchAt: this.delivery.nextBatch,
        },
      };
    }
    if (path === "advance-to" && req.method === "POST") {
      const b = body(req);
      const time = str(b.time, "time");
      const hm = /^(\d{2}):(\d{2})$/.exec(time);
      const minutes = hm ? Number(hm[1]) * 60 + Number(hm[2]) : Number.NaN;
      if (!(minutes >= 0 && minutes < 24 * 60)) throw new SubsInputError("time must be HH:MM (UTC)");
      const now = this.clock.now();
      let target: number;
      if (b.date !== undefined) {
        const date = str(b.date, "date");
        target = at(date, minutes);
        if (Number.isNaN(target)) throw new SubsInputError("date must be YYYY-MM-DD");
        if (target < now) throw new SubsInputError("that time has passed");
      } else {
        target = at(dateOf(now), minutes);
        if (target <= now) target += DAY_MS;
      }
      this.clock.advance(target - now);
      return { status: 200, body: { now: this.clock.now(), iso: new Date(this.clock.now()).toISOString() } };
    }
    if (path === "system-declines" && req.method === "POST") {
      const b = body(req);
      for (const k of ["payments", "refunds", "deprecated500"] as const) {
        if (b[k] === undefined) continue;
        const n = int(b[k], k);
        if (n < 0) throw new SubsInputError(`${k} must be >= 0`);
        this.s.systemDeclines[k] = n;
      }
      return { status: 200, body: { ...this.s.systemDeclines } };
    }
    return { status: 404, body: { error: "no such subscriptions admin route" } };
  }
}
