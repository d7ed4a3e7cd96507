/**
 * One evaluation, as the schedule runs it: take the evaluator's lease (one fleet process at a time, across
 * processes: a row in the database, not a flag in memory), read the snapshot, run the rules, apply each
 * alert's life with its changes and deliveries, then send what is due. A process that does not get the
 * lease does nothing this time. During the first `startupGraceSeconds` after the process started, rules
 * do not run (units need one heartbeat period to report in after a fleet outage), deliveries still do.
 */
import { randomUUID } from "node:crypto";
import type { FleetContext } from "../context.js";
import { claimMs, makeSender, type Sender, sendDue } from "./deliver.js";
import { type LifeAction, planLife } from "./life.js";
import { NO_SCOPE, receiversOf, silenceFor } from "./routing.js";
import { evaluateRules } from "./rules.js";
import { type AlertRule, alertsDb } from "./schema.js";
import type { AlertSettings } from "./settings.js";
import { activeSilences, unitScopes } from "./silenceStore.js";
import { readSnapshot } from "./snapshotStore.js";
import {
  applyAction,
  type ChangeTarget,
  claimDelivery,
  type DueDelivery,
  dueDeliveries,
  openAlerts,
  releaseLease,
  takeLease,
  touchHeld,
} from "./store.js";

export const LEASE = "alerts.evaluator";

export interface RunResult {
  /** False: another process holds the lease. */
  ran: boolean;
  /** False: within the start-up grace, rules were not run. */
  evaluated: boolean;
  changes: number;
  sent: number;
  failed: number;
}

export interface AlertEvaluator {
  run(): Promise<RunResult>;
  /** Releases the lease (if held) and closes the mail transport. */
  close(): Promise<void>;
  readonly holder: string;
}

/** Every channel a change may go to with these settings (routing picks among them per change). */
export function channelsOf(s: AlertSettings): string[] {
  const routed = s.routes.flatMap((r) =>
    (s.mail === undefined ? [] : (r.mail ?? [])).map((m) => `mail:${m}`),
  );
  return [
    ...(s.mail === undefined ? [] : ["mail"]),
    ...new Set(routed),
    ...s.webhooks.map((w) => `webhook:${w.name}`),
  ];
}

export function alertEvaluator(
  ctx: FleetContext,
  s: AlertSettings,
  opts: { startedAt?: number; sender?: Sender } = {},
): AlertEvaluator {
  const db = alertsDb(ctx);
  const holder = `${process.pid}-${randomUUID()}`;
  const startedAt = opts.startedAt ?? ctx.clock.now();
  const sender = opts.sender ?? makeSender(s);
  const leaseMs = s.leaseSeconds * 1000;
  let held = false;

  async function evaluate(now: number): Promise<number> {
    const open = await openAlerts(db);
    const openOffline = new Set(open.filter((a) => a.rule === "offline").map((a) => a.unitId));
    const snapshot = await readSnapshot(ctx, s.rules, now, startedAt, openOffline);
    const findings = evaluateRules(snapshot, s.rules);
    const silences = await activeSilences(db, now);
    const byId = new Map(open.map((a) => [a.id, a]));
    // An open alert whose last message a silence kept back is sent at the first evaluation it is not silenced.
    const scopesOf = async (units: readonly string[]) =>
      silences.length === 0 && s.routes.length === 0 ? new Map() : await unitScopes(db, units);
    const preScopes = await scopesOf(open.filter((a) => a.silenced === true).map((a) => a.unitId));
    const planned = planLife(open, findings, now, s.holdOffMinutes * 60_000, s.renotifyMinutes * 60_000).map(
      (a): LifeAction => {
        if (a.kind !== "hold" || a.renotify) return a;
        const o = byId.get(a.id);
        if (o === undefined || o.silenced !== true || o.ackedAt !== null) return a;
        const still = silenceFor(silences, o.unitId, o.rule, preScopes.get(o.unitId) ?? NO_SCOPE, now);
        return still === null ? { ...a, renotify: true } : a;
      },
    );
    const subjectOf = (a: LifeAction): { unitId: string; rule: AlertRule } | undefined =>
      a.kind === "open" ? a : byId.get(a.id);
    // A hold that changes nothing but the time it last held: one statement for all of them.
    const detailOf = new Map(open.map((a) => [a.id, a.detail]));
    const quiet = planned.filter((a) => a.kind === "hold" && !a.renotify && detailOf.get(a.id) === a.detail);
    await touchHeld(
      db,
      quiet.map((a) => (a.kind === "hold" ? a.id : "")),
      now,
    );
    const actions = planned.filter((a) => !quiet.includes(a));
    const runId = randomUUID();
    const scopes = await scopesOf(actions.flatMap((a) => subjectOf(a)?.unitId ?? []));
    const targetOf = (a: LifeAction): ChangeTarget => {
      const who = subjectOf(a);
      if (who === undefined) return { channels: [], silencedBy: null };
      const scope = scopes.get(who.unitId) ?? NO_SCOPE;
      const silence = silenceFor(silences, who.unitId, who.rule, scope, now);
      return { channels: receiversOf(s, who.rule, scope), silencedBy: silence?.id ?? null };
    };
    let changes = 0;
    for (const a of actions) {
      try {
        changes += (await applyAction(db, a, now, runId, targetOf(a))).length;
      } catch (e) {
        // An alert another evaluator opened meanwhile (the unique open index): nothing to do.
        ctx.logger.warn(
          { error: e instanceof Error ? e.message : String(e), action: a.kind },
          "alert change not applied",
        );
      }
    }
    return changes;
  }

  /** Claims `ds` for one send while this process still holds the lease (renewed here): the ones it got. */
  async function claim(ds: readonly DueDelivery[]): Promise<DueDelivery[]> {
    const now = ctx.clock.now();
    held = await takeLease(db, LEASE, holder, now, leaseMs);
    if (!held) return [];
    const mine: DueDelivery[] = [];
    for (const d of ds) if (await claimDelivery(db, d, now, claimMs(s))) mine.push(d);
    return mine;
  }

  return {
    holder,
    async run() {
      const now = ctx.clock.now();
      held = await takeLease(db, LEASE, holder, now, leaseMs);
      if (!held) return { ran: false, evaluated: false, changes: 0, sent: 0, failed: 0 };
      const evaluated = now >= startedAt + s.startupGraceSeconds * 1000;
      const changes = evaluated ? await evaluate(now) : 0;
      const due = await dueDeliveries(db, ctx.clock.now());
      const r = due.length === 0 ? { sent: 0, failed: 0 } : await sendDue(ctx, db, s, sender, due, claim);
      if (changes > 0 || r.sent > 0 || r.failed > 0) ctx.logger.info({ changes, ...r }, "alerts evaluated");
      return { ran: true, evaluated, changes, ...r };
    },
    async close() {
      sender.close();
      if (held) await releaseLease(db, LEASE, holder).catch(() => undefined);
    },
  };
}
