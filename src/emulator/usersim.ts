import { randomUUID } from "node:crypto";
import type { CheckinTarget, EmuClock, EmuRequest, EmuResponse, InterfaceHandler, SimUser } from "./types.js";
import type { TokenService } from "./v10/auth.js";
import { jsonBody } from "./v10/body.js";
import { errorResponse, V10Error } from "./v10/errors.js";

const PREFIX = "/app/usersimulation/";

function refuse(status: number, message: string): EmuResponse {
  return errorResponse(new V10Error(status, "1099", message), randomUUID());
}

/** A check-in target and whether the user layer must play the `slowToAccept`/`walksAway` features for it. */
export interface SimTarget {
  target: CheckinTarget;
  /** True when the target models those features itself (V10); false for the older interface. */
  modelsUserFeatures: boolean;
}

interface DeferredAccept {
  due: number;
  beaconId: string;
  user: SimUser;
  target: CheckinTarget;
}

/**
 * The sandbox user simulation for both interfaces (pos-v10 §17): a beaconId is a V10 PoS's beaconId or an
 * older-interface PoSUnitId, and the call goes to whichever model owns it (types.ts CheckinTarget). Over
 * HTTP the calls need the bearer token of any integrator and no `x-service-…` headers.
 */
export class UserSimulation implements InterfaceHandler {
  private deferred: DeferredAccept[] = [];
  private readonly unsubscribe: () => void;

  constructor(
    private readonly targets: readonly SimTarget[],
    private readonly deps: {
      findUser(phone: string): SimUser | undefined;
      tokens: TokenService;
      clock: EmuClock;
      /** Extra accept delay of `slowToAccept` users, emulator ms. */
      slowAcceptMs: number;
    },
  ) {
    const unTick = deps.clock.onTick((now) => this.runDue(now));
    // A deferred accept is due at its own time within a clock advance.
    const unSchedule = deps.clock.schedule(() =>
      this.deferred.reduce<number | null>((min, a) => (min === null || a.due < min ? a.due : min), null),
    );
    this.unsubscribe = () => {
      unTick();
      unSchedule();
    };
  }

  /** Plays the deferred accepts of slow users whose delay ran out. */
  private runDue(now: number): void {
    if (this.deferred.length === 0) return;
    const due = this.deferred.filter((a) => a.due <= now);
    this.deferred = this.deferred.filter((a) => a.due > now);
    for (const a of due) a.target.accept(a.beaconId, a.user);
  }

  private route(
    beaconId: string,
    phone: string | null,
    act: (t: SimTarget, user: SimUser | null) => EmuResponse,
  ): EmuResponse {
    const target = this.targets.find((t) => t.target.ownsBeacon(beaconId));
    if (target === undefined) return refuse(404, "no point of sale has this beaconId");
    if (phone === null) return act(target, null);
    const user = this.deps.findUser(phone);
    if (user === undefined) return refuse(404, "unknown app user");
    return act(target, user);
  }

  /** Stops the deferred accepts. */
  close(): void {
    this.unsubscribe();
    this.deferred = [];
  }

  /** The user with `phone` checks in on the PoS owning `beaconId`. */
  checkin(beaconId: string, phone: string): EmuResponse {
    return this.route(beaconId, phone, (t, u) =>
      u ? t.target.checkin(beaconId, u) : refuse(404, "unknown app user"),
    );
  }

  /**
   * The user accepts the payment issued to them. For a target that does not model the user features, a
   * `walksAway` user's accept has no effect and a `slowToAccept` user's accept is played `slowAcceptMs` of
   * emulator time later.
   */
  accept(beaconId: string, phone: string): EmuResponse {
    return this.route(beaconId, phone, (t, u) => {
      if (u === null) return refuse(404, "unknown app user");
      if (t.modelsUserFeatures) return t.target.accept(beaconId, u);
      if (u.features.includes("walksAway")) return { status: 200 };
      if (u.features.includes("slowToAccept")) {
        this.deferred.push({
          due: this.deps.clock.now() + this.deps.slowAcceptMs,
          beaconId,
          user: u,
          target: t.target,
        });
        return { status: 200 };
      }
      return t.target.accept(beaconId, u);
    });
  }

  /** The user rejects the active payment. */
  reject(beaconId: string): EmuResponse {
    return this.route(beaconId, null, (t) => t.target.reject(beaconId));
  }

  async handle(req: EmuRequest): Promise<EmuResponse | null> {
    if (!req.path.startsWith(PREFIX)) return null;
    const action = req.path.slice(PREFIX.length);
    if (action !== "checkin" && action !== "acceptpayment" && action !== "cancelpaymentbyuser")
      return { status: 404 };
    if (req.method !== "POST") return { status: 405, headers: { allow: "POST" } };
    if (this.deps.tokens.verifyRequest(req) === null) return { status: 401 };
    try {
      const withPhone = action !== "cancelpaymentbyuser";
      const body = jsonBody(req, withPhone ? ["beaconId", "phoneNumber"] : ["beaconId"]);
      const { beaconId, phoneNumber } = body;
      if (typeof beaconId !== "string") return refuse(400, "beaconId must be a string");
      if (!withPhone) return this.reject(beaconId);
      if (typeof phoneNumber !== "string") return refuse(400, "phoneNumber must be a string");
      return action === "checkin" ? this.checkin(beaconId, phoneNumber) : this.accept(beaconId, phoneNumber);
    } catch (e: unknown) {
      if (e instanceof V10Error) return errorResponse(e, randomUUID());
      throw e;
    }
  }
}
