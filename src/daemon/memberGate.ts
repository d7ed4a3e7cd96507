/**
 * The member gate (issue 18): a badge tap turns into a plan-vend decision for the next vend request, from the
 * entitlement list in force (entitlementStore.ts) and the journal's usage counts; no network in that path.
 */
import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { Clock, Timer } from "../core/clock.js";
import type { Minor } from "../core/money.js";
import type { PlanGate } from "../engine/options.js";
import type { PlanDecision } from "../engine/types.js";
import type { Journal, PlanMember } from "../journal/journal.js";
import type { Allowance, EntitlementMember } from "../update/entitlements.js";
import type { EntitlementStore } from "./entitlementStore.js";

/** The day (YYYY-MM-DD) and month (YYYY-MM) of `ms` in `timeZone`: the periods of the allowances. */
export function periodsOf(ms: number, timeZone: string): { day: string; month: string } {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  const month = `${get("year")}-${get("month")}`;
  return { day: `${month}-${get("day")}`, month };
}

/** True when one more vend at `price` stays within `limit`, given the period's `used` counts. */
export function withinAllowance(
  limit: Allowance,
  used: { items: number; amount: Minor },
  price: Minor,
): boolean {
  if (limit.items !== null && used.items + 1 > limit.items) return false;
  if (limit.amount !== null && used.amount + price > limit.amount) return false;
  return true;
}

export interface GateOptions {
  store: EntitlementStore;
  journal: Pick<Journal, "planUsage">;
  clock: Clock;
  logger: Logger;
  display: CheckinDisplay;
  overAllowance: "pay" | "deny";
  /** How long after a tap the next vend request is the member's, ms. */
  tapWindowMs: number;
  /** True when no sale is in progress (the engine is idle): only then does a tap change the screen. */
  idle: () => boolean;
}

/**
 * The longest a vend request waits for a badge tap still being handled (issue 31), ms: the technician
 * badges' and the member's scrypt hashes on the thread pool, which take tens of milliseconds on an idle
 * unit and several hundred on a loaded one. Past it, the request goes on without the tap (the normal flow).
 * Well inside the time a VMC allows for the answer to a vend request, and far below the payment timeout.
 */
export const TAP_WAIT_MS = 2000;

/** A tap waiting for its vend request: a member (ids, hash and limits) or an unknown badge. */
type Armed =
  | { kind: "member"; member: EntitlementMember; timeZone: string; until: number }
  | { kind: "unknown"; until: number };

const SCREEN = {
  hello: "Plan: choose a product",
  unknown: "This badge has no plan at this machine",
  overDeny: (period: string) => `Your plan's allowance is used up ${period}`,
  overPay: (period: string) => `Plan allowance used up ${period}: pay with the app`,
  idle: "Choose a product",
} as const;

/**
 * The member gate (engine PlanGate): a badge tap arms it for `tapWindowMs`; the next vend request taken
 * while the engine is idle asks `decide`, which consumes the tap. Within the member's day and month
 * allowances (the journal's counts, in the list's time zone) → a plan vend (`grant`); over them or badge
 * unknown → the normal payment flow (`overAllowance: pay`, null) or a denial with a clear message (`deny`).
 */
export class MemberGate implements PlanGate {
  private armed: Armed | null = null;
  private expiry: Timer | null = null;
  /** Taps being handled: from the card's arrival (the reader) to the gate's decision. */
  private readonly inProgress = new Set<Promise<void>>();

  constructor(private readonly o: GateOptions) {}

  /** A card was presented: `handled` settles when its tap is decided (armed or not). */
  tapStarted(handled: Promise<unknown>): void {
    const p = handled.then(
      () => {},
      () => {},
    );
    this.inProgress.add(p);
    void p.then(() => this.inProgress.delete(p));
  }

  /**
   * Null when no tap is being handled; otherwise a promise that resolves when every tap in progress is
   * decided, or after TAP_WAIT_MS (whichever is first). The engine holds a vend request until then, so a
   * member's fast selection is never turned into a paid vend (or denied) because of timing.
   */
  settling(): Promise<void> | null {
    if (this.inProgress.size === 0) return null;
    const taps = [...this.inProgress];
    return new Promise<void>((resolve) => {
      const bound = this.o.clock.setTimer(TAP_WAIT_MS, () => {
        // Given up on: no later request waits for these taps again.
        for (const t of taps) this.inProgress.delete(t);
        this.o.logger.warn(
          { waitedMs: TAP_WAIT_MS },
          "badge tap not decided in time: the vend request goes on",
        );
        resolve();
      });
      void Promise.all(taps).then(() => {
        bound.cancel();
        resolve();
      });
    });
  }

  /**
   * A badge that is not a technician's was tapped. `normalisedUid` is used for the one hash and dropped.
   * Returns what the tap armed (for the log and tests): `member`, `unknown`, or `noList` (no list in force:
   * nothing armed, the normal flow).
   */
  tap(normalisedUid: string): Promise<"member" | "unknown" | "noList"> {
    const decided = this.decideTap(normalisedUid);
    this.tapStarted(decided);
    return decided;
  }

  private async decideTap(normalisedUid: string): Promise<"member" | "unknown" | "noList"> {
    if (this.o.store.current() === null) {
      this.o.logger.info("badge tap: no entitlement list in force; normal payment flow");
      return "noList";
    }
    const found = await this.o.store.lookup(normalisedUid);
    const until = this.o.clock.now() + this.o.tapWindowMs;
    this.expiry?.cancel();
    this.expiry = this.o.clock.setTimer(this.o.tapWindowMs, () => this.expire());
    if (found === null) {
      this.armed = { kind: "unknown", until };
      this.o.logger.info("badge tap: not on the entitlement list");
      if (this.o.overAllowance === "deny") this.screen(SCREEN.unknown);
      return "unknown";
    }
    const { member, list } = found;
    this.armed = { kind: "member", member, timeZone: list.timeZone, until };
    this.o.logger.info(
      { memberId: member.memberId, planId: member.planId, badge: member.badge },
      "badge tap: member",
    );
    this.screen(SCREEN.hello);
    return "member";
  }

  decide(item: number, price: Minor): PlanDecision | null {
    const armed = this.armed;
    const now = this.o.clock.now();
    this.disarm();
    if (armed === null || now >= armed.until) return null;
    if (armed.kind === "unknown")
      return this.o.overAllowance === "deny" ? { kind: "deny", message: SCREEN.unknown } : null;
    const { member } = armed;
    // The list may have expired (or been replaced without the member) since the tap.
    const list = this.o.store.current();
    if (list === null || now >= member.validTo || !list.members.some((m) => m.memberId === member.memberId)) {
      this.o.logger.info(
        { memberId: member.memberId },
        "plan vend not possible: no list in force for the member",
      );
      return null;
    }
    const { day, month } = periodsOf(now, armed.timeZone);
    const usedDay = this.o.journal.planUsage(member.memberId, day);
    const usedMonth = this.o.journal.planUsage(member.memberId, month);
    const over = !withinAllowance(member.perDay, usedDay, price)
      ? "today"
      : !withinAllowance(member.perMonth, usedMonth, price)
        ? "this month"
        : null;
    const who = { memberId: member.memberId, planId: member.planId, item, price };
    if (over !== null) {
      this.o.logger.info({ ...who, over, policy: this.o.overAllowance }, "plan allowance used up");
      if (this.o.overAllowance === "deny") return { kind: "deny", message: SCREEN.overDeny(over) };
      this.o.display.show({ kind: "idle", checkinUri: null, message: SCREEN.overPay(over) });
      return null;
    }
    this.o.logger.info(who, "plan vend granted");
    const granted: PlanMember = {
      memberId: member.memberId,
      planId: member.planId,
      badge: member.badge,
      day,
      month,
    };
    return { kind: "grant", member: granted };
  }

  private disarm(): void {
    this.armed = null;
    this.expiry?.cancel();
    this.expiry = null;
  }

  /** The tap window passed without a vend request: the greeting goes. */
  private expire(): void {
    this.armed = null;
    this.expiry = null;
    this.screen(SCREEN.idle);
  }

  private screen(message: string): void {
    if (this.o.idle()) this.o.display.show({ kind: "idle", checkinUri: null, message });
  }
}
