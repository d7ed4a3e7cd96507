import { verifyAuthorization } from "../../payment/legacy/signing.js";
import type { CheckinTarget, EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import { createCheckinTarget } from "./checkin.js";
import { LegacyFault, parseFields } from "./fields.js";
import { type LegacyDeps, LegacyModel, type LegacySeed } from "./model.js";
import type { Operation } from "./ops.js";
import { PAYMENT_OPERATIONS } from "./ops-payment.js";
import { RESERVATION_OPERATIONS } from "./ops-reservation.js";
import { UNIT_OPERATIONS } from "./ops-units.js";
import { DEFAULT_TIMING, type LegacyTiming } from "./state.js";

export type { LegacyDeps, LegacySeed, LegacyTiming };

/** Optional emulator tuning; every value has the documented default. */
export interface LegacyOptions extends Partial<LegacyTiming> {
  /** Accepted difference between the Authorization timestamp and emulator time, s (default 300, pos-legacy §3). */
  authToleranceS?: number;
}

/** The older interface's handler, its check-in target, and emulator-only controls. */
export interface LegacyInterface extends InterfaceHandler, CheckinTarget {
  /**
   * Fault point, a no-op unless armed: the next `count` calls of `operation` answer 400 with `statusCode`
   * without being applied (makes codes such as PaymentRefund 99 "technical error" reachable).
   */
  armFault(operation: string, statusCode: number, count?: number): void;
  /** Runs the time rules now (also done on every clock tick). */
  sweep(): void;
  /** Unsubscribes from the clock. */
  close(): void;
}

const ROUTE = /^\/API\/V\d\d\/(.*)$/;

const OPERATIONS: ReadonlyMap<string, Operation> = new Map(
  Object.entries({ ...UNIT_OPERATIONS, ...PAYMENT_OPERATIONS, ...RESERVATION_OPERATIONS }).map(
    ([name, op]) => [name.toLowerCase(), op],
  ),
);

/**
 * The older operation-based interface of the emulator: `POST /API/V{dd}/{Operation}` (pos-legacy §1),
 * every request signed with the `Authorization` header (§3, `401` without a body before any logic),
 * operation names and field names matched case-insensitively (§2).
 */
export function createLegacyInterface(
  deps: LegacyDeps,
  seed: LegacySeed,
  options: LegacyOptions = {},
): LegacyInterface {
  const timing: LegacyTiming = {
    acceptTimeoutMs: options.acceptTimeoutMs ?? DEFAULT_TIMING.acceptTimeoutMs,
    releaseMs: options.releaseMs ?? DEFAULT_TIMING.releaseMs,
    acceptToDoneMs: options.acceptToDoneMs ?? DEFAULT_TIMING.acceptToDoneMs,
    checkinMs: options.checkinMs ?? DEFAULT_TIMING.checkinMs,
  };
  const model = new LegacyModel(deps, seed, timing);
  const faults = new Map<string, { statusCode: number; left: number }>();
  const unTick = deps.clock.onTick(() => model.sweep());
  const unSchedule = deps.clock.schedule(() => model.nextDue());
  const unsubscribe = (): void => {
    unTick();
    unSchedule();
  };

  async function handle(req: EmuRequest): Promise<EmuResponse | null> {
    const route = ROUTE.exec(req.path);
    if (!route) return null;
    const authorized = verifyAuthorization({
      apiKey: seed.apiKey,
      requestUrl: req.url,
      body: req.body,
      header: req.headers.authorization,
      nowMs: deps.clock.now(),
      toleranceS: options.authToleranceS ?? 300,
    });
    if (!authorized) return { status: 401 };
    if (req.method !== "POST") return { status: 405, headers: { allow: "POST" } };
    const name = (route[1] ?? "").toLowerCase();
    const op = OPERATIONS.get(name);
    if (!op) return { status: 404 };
    const fault = faults.get(name);
    if (fault && fault.left > 0) {
      fault.left -= 1;
      return {
        status: 400,
        body: { StatusCode: fault.statusCode, StatusText: "Technical error (injected fault)" },
      };
    }
    try {
      return { status: 200, body: op(model, parseFields(req.body)) };
    } catch (e) {
      if (e instanceof LegacyFault)
        return { status: 400, body: { StatusCode: e.statusCode, StatusText: e.statusText } };
      throw e;
    }
  }

  return {
    handle,
    ...createCheckinTarget(model),
    armFault(operation, statusCode, count = 1) {
      faults.set(operation.toLowerCase(), { statusCode, left: count });
    },
    sweep: () => model.sweep(),
    close: unsubscribe,
  };
}
