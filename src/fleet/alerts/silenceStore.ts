/**
 * Silences and maintenance windows in the database (issue 42, table `alert_silences`): made, listed,
 * edited and ended by managers (dashboard, API, CLI); the evaluator reads the active ones. A silence's
 * matchers (unit, group, rule) are null for "any"; at least one is set. It expires by itself at its end.
 * Also what routes and silences know of units (their groups and company).
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { z } from "zod";
import { GROUP_NAME, GROUP_NAME_RULE } from "../groups/index.js";
import type { InvoicesDatabase } from "../invoices/index.js";
import type { Silence, UnitScope } from "./routing.js";
import type { SilencedChange } from "./rows.js";
import { ALERT_RULES, type AlertRule, type AlertSilencesTable, type AlertsDb } from "./schema.js";

export type { SilencedChange } from "./rows.js";

import { MAX_SILENCE_MS, parseInstant, parseSpan } from "./silenceTime.js";

/** What a manager gives for a new silence (strings as typed; parsed and checked by {@link silenceProblems}). */
export const SilenceInput = z.strictObject({
  kind: z.enum(["silence", "maintenance"]).default("silence"),
  unit: z.string().trim().max(64).optional(),
  group: z.string().trim().max(63).optional(),
  rule: z.string().trim().max(40).optional(),
  /** A time with its zone; absent or empty: now. */
  starts: z.string().trim().max(40).optional(),
  /** A time with its zone, or use `for`. */
  ends: z.string().trim().max(40).optional(),
  /** A duration (`2h`, `90m`) from the start. */
  for: z.string().trim().max(20).optional(),
  reason: z.string().trim().max(500).optional(),
});
export type SilenceInput = z.input<typeof SilenceInput>;

/** What a manager may change: the times and the reason (its matchers stay; end it and make another). */
export const SilenceEdit = z.strictObject({
  starts: z.string().trim().max(40).optional(),
  ends: z.string().trim().max(40).optional(),
  for: z.string().trim().max(20).optional(),
  reason: z.string().trim().max(500).optional(),
});
export type SilenceEdit = z.input<typeof SilenceEdit>;

const blank = (v: string | undefined): v is undefined => v === undefined || v.trim() === "";

function toSilence(r: AlertSilencesTable): Silence {
  return {
    id: r.id,
    kind: r.kind,
    unitId: r.unit_id,
    group: r.group_name,
    rule: r.rule,
    startsAt: Number(r.starts_at),
    endsAt: Number(r.ends_at),
    createdBy: r.created_by,
    reason: r.reason,
    createdAt: Number(r.created_at),
    updatedBy: r.updated_by,
    updatedAt: r.updated_at === null ? null : Number(r.updated_at),
  };
}

/** Start and end from `starts`, `ends`/`for` (`startDefault` when no start is given), or what is wrong. */
function spanOf(
  i: { starts?: string | undefined; ends?: string | undefined; for?: string | undefined },
  startDefault: number,
  endDefault: number | null,
  problems: string[],
): { startsAt: number; endsAt: number } {
  let startsAt = startDefault;
  if (!blank(i.starts)) {
    const p = parseInstant("starts", i.starts);
    if (p.ok) startsAt = p.ms;
    else problems.push(p.problem);
  }
  let endsAt = endDefault ?? Number.NaN;
  if (!blank(i.ends) && !blank(i.for)) problems.push("give ends or for, not both");
  else if (!blank(i.ends)) {
    const p = parseInstant("ends", i.ends);
    if (p.ok) endsAt = p.ms;
    else problems.push(p.problem);
  } else if (!blank(i.for)) {
    const p = parseSpan("for", i.for);
    if (p.ok) endsAt = startsAt + p.ms;
    else problems.push(p.problem);
  } else if (endDefault === null) problems.push("give the end: ends (a time with its zone) or for (e.g. 2h)");
  return { startsAt, endsAt };
}

function spanProblems(startsAt: number, endsAt: number, now: number, problems: string[]): void {
  if (problems.length > 0) return;
  if (endsAt <= startsAt) problems.push("the end must be after the start");
  else if (endsAt <= now) problems.push("the end is in the past: nothing would be silenced");
  else if (endsAt - startsAt > MAX_SILENCE_MS) problems.push("at most 366 days from start to end");
}

/** Makes a silence or maintenance window; its id, or the problems (nothing is stored then). */
export async function createSilence(
  db: AlertsDb,
  raw: unknown,
  by: string,
  now: number,
): Promise<{ ok: true; silence: Silence } | { ok: false; problems: string[] }> {
  const parsed = SilenceInput.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`),
    };
  const i = parsed.data;
  const problems: string[] = [];
  const unit = blank(i.unit) ? null : i.unit;
  const group = blank(i.group) ? null : i.group;
  const rule = blank(i.rule) ? null : i.rule;
  if (unit === null && group === null && rule === null)
    problems.push("say what to silence: a unit, a group, a rule (or several of them)");
  if (group !== null && !GROUP_NAME.test(group)) problems.push(`group: ${GROUP_NAME_RULE}`);
  if (rule !== null && !(ALERT_RULES as readonly string[]).includes(rule))
    problems.push(`rule ${JSON.stringify(rule)} is not a rule: ${ALERT_RULES.join(", ")}`);
  if (unit !== null) {
    const known = await db.selectFrom("units").select("id").where("id", "=", unit).executeTakeFirst();
    if (known === undefined && unit !== "*")
      problems.push(
        `no unit ${JSON.stringify(unit)} in this fleet (\`vendd fleet units\` lists them; * is the fleet-wide alerts)`,
      );
  }
  if (blank(i.reason)) problems.push("say why (reason)");
  const { startsAt, endsAt } = spanOf(i, now, null, problems);
  spanProblems(startsAt, endsAt, now, problems);
  if (problems.length > 0) return { ok: false, problems };
  const row: AlertSilencesTable = {
    id: randomUUID(),
    kind: i.kind,
    unit_id: unit,
    group_name: group,
    rule: rule as AlertRule | null,
    starts_at: startsAt,
    ends_at: endsAt,
    created_by: by,
    reason: i.reason ?? "",
    created_at: now,
    updated_by: null,
    updated_at: null,
  };
  await db.insertInto("alert_silences").values(row).execute();
  return { ok: true, silence: toSilence(row) };
}

export async function getSilence(db: AlertsDb, id: string): Promise<Silence | null> {
  const r = await db.selectFrom("alert_silences").selectAll().where("id", "=", id).executeTakeFirst();
  return r === undefined ? null : toSilence(r);
}

/** Silences newest first: `current` (active and upcoming), `expired`, or all (at most `limit`). */
export async function listSilences(
  db: AlertsDb,
  now: number,
  which: "current" | "expired" | "all" = "all",
  limit = 500,
): Promise<Silence[]> {
  let q = db.selectFrom("alert_silences").selectAll();
  if (which === "current") q = q.where("ends_at", ">", now);
  if (which === "expired") q = q.where("ends_at", "<=", now);
  const rows = await q.orderBy("starts_at", "desc").orderBy("id").limit(limit).execute();
  return rows.map(toSilence);
}

/** The silences in force at `now` (the evaluator's read). */
export async function activeSilences(db: AlertsDb, now: number): Promise<Silence[]> {
  const rows = await db
    .selectFrom("alert_silences")
    .selectAll()
    .where("starts_at", "<=", now)
    .where("ends_at", ">", now)
    .orderBy("starts_at")
    .orderBy("id")
    .execute();
  return rows.map(toSilence);
}

/** Changes a silence's times or reason (who and when kept); the silence, or the problems. */
export async function editSilence(
  db: AlertsDb,
  id: string,
  raw: unknown,
  by: string,
  now: number,
): Promise<{ ok: true; silence: Silence } | { ok: false; problems: string[]; missing?: true }> {
  const cur = await getSilence(db, id);
  if (cur === null)
    return { ok: false, problems: [`no silence ${JSON.stringify(id.slice(0, 40))}`], missing: true };
  const parsed = SilenceEdit.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`),
    };
  const e = parsed.data;
  const problems: string[] = [];
  if (e.reason !== undefined && e.reason.trim() === "") problems.push("the reason cannot be empty");
  const startsAt = blank(e.starts)
    ? cur.startsAt
    : spanOf({ starts: e.starts }, cur.startsAt, cur.endsAt, problems).startsAt;
  const { endsAt } = spanOf({ ends: e.ends, for: e.for }, startsAt, cur.endsAt, problems);
  spanProblems(startsAt, endsAt, now, problems);
  if (problems.length > 0) return { ok: false, problems };
  await db
    .updateTable("alert_silences")
    .set({
      starts_at: startsAt,
      ends_at: endsAt,
      ...(blank(e.reason) ? {} : { reason: e.reason }),
      updated_by: by,
      updated_at: now,
    })
    .where("id", "=", id)
    .execute();
  return { ok: true, silence: (await getSilence(db, id)) ?? cur };
}

/** Ends a silence now (an upcoming window is cancelled); false when there is none or it had ended. */
export async function endSilence(db: AlertsDb, id: string, by: string, now: number): Promise<boolean> {
  const cur = await getSilence(db, id);
  if (cur === null || cur.endsAt <= now) return false;
  const r = await db
    .updateTable("alert_silences")
    .set({
      starts_at: Math.min(cur.startsAt, now - 1),
      ends_at: now,
      updated_by: by,
      updated_at: now,
    })
    .where("id", "=", id)
    .where("ends_at", ">", now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Each of `unitIds`' groups and company (id, name, organisation number), for routes and silences. */
export async function unitScopes(db: AlertsDb, unitIds: readonly string[]): Promise<Map<string, UnitScope>> {
  const out = new Map<string, { groups: string[]; company: string[] }>();
  const ids = [...new Set(unitIds)].filter((u) => u !== "*");
  for (const u of ids) out.set(u, { groups: [], company: [] });
  const idb = db as unknown as Kysely<InvoicesDatabase>;
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const groups = await idb
      .selectFrom("unit_groups")
      .select(["unit_id", "group_name"])
      .where("unit_id", "in", chunk)
      .execute();
    for (const g of groups) out.get(g.unit_id)?.groups.push(g.group_name);
    const companies = await idb
      .selectFrom("company_units as cu")
      .innerJoin("companies as c", "c.id", "cu.company_id")
      .select(["cu.unit_id", "c.id", "c.name", "c.org_number"])
      .where("cu.unit_id", "in", chunk)
      .execute();
    for (const c of companies) out.get(c.unit_id)?.company.push(c.id, c.name, c.org_number);
  }
  return out;
}

/** The changes silences kept back, newest first (what the alerts page and the API show). */
export async function silencedChanges(db: AlertsDb, limit = 100): Promise<SilencedChange[]> {
  const rows = await db
    .selectFrom("alert_changes as c")
    .innerJoin("alerts as a", "a.id", "c.alert_id")
    .leftJoin("alert_silences as s", "s.id", "c.silenced_by")
    .select([
      "c.id",
      "c.kind",
      "c.at",
      "c.detail",
      "a.id as alert_id",
      "a.unit_id",
      "a.rule",
      "c.silenced_by",
      "s.kind as silence_kind",
      "s.reason",
    ])
    .where("c.silenced_by", "is not", null)
    .orderBy("c.at", "desc")
    .orderBy("c.id")
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    changeId: r.id,
    kind: r.kind,
    at: Number(r.at),
    detail: r.detail,
    alertId: r.alert_id,
    unitId: r.unit_id,
    rule: r.rule,
    silenceId: r.silenced_by ?? "",
    silenceKind: r.silence_kind,
    silenceReason: r.reason,
  }));
}
