/**
 * What the dashboard reads, through Kysely only (the same queries on SQLite and PostgreSQL): the pages and
 * the JSON API call these, so both show the same numbers. Amounts are integer minor units with their
 * currency; aggregates are read through Number() because PostgreSQL returns sum() of bigint as a string.
 */
import { sql } from "kysely";
import type { FleetContext } from "../context.js";
import { dayOf } from "../context.js";

/** Units send a heartbeat every minute; one missing three is offline. */
export const HEARTBEAT_INTERVAL_MS = 60_000;
export const OFFLINE_AFTER_MS = 3 * HEARTBEAT_INTERVAL_MS;
/** A backlog this large, or this old, needs a look. */
export const BACKLOG_EVENTS_ALERT = 100;
export const BACKLOG_AGE_ALERT_MS = 15 * 60_000;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function isDay(text: string): boolean {
  if (!DAY.test(text)) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text;
}

/** `day` plus `n` days (calendar arithmetic on the date, no time zone involved). */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** Monday of `day`'s ISO week. */
export function weekStart(day: string): string {
  const wd = new Date(`${day}T00:00:00Z`).getUTCDay();
  return addDays(day, -((wd + 6) % 7));
}

/** Every day from `from` to `to` inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to && out.length < 400; d = addDays(d, 1)) out.push(d);
  return out;
}

/** The currency's minor-unit digits (2 for EUR, 0 for JPY; 2 when unknown). */
export function currencyDecimals(currency: string): number {
  try {
    return (
      new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ??
      2
    );
  } catch {
    return 2;
  }
}

export interface Totals {
  currency: string;
  /** Sessions that captured money. */
  sales: number;
  sessions: number;
  captured: number;
  refunded: number;
  /** captured − refunded. */
  net: number;
  vendsOk: number;
  vendsFailed: number;
}

export type UnitStatus = "pending" | "approved" | "revoked";

export interface UnitSummary {
  id: string;
  label: string;
  status: UnitStatus;
  fingerprint: string;
  enrolledAt: number;
  lastSeenAt: number | null;
  online: boolean;
  configVersion: string | null;
  releaseVersion: string | null;
  backlogEvents: number;
  backlogOldestAt: number | null;
  unresolved: number;
  committedSeq: number;
  /** Why the unit needs a look: unresolved sessions, a large or old backlog. */
  attention: string[];
}

function totalsColumns() {
  return [
    "currency",
    sql<number>`count(*)`.as("sessions"),
    sql<number>`sum(case when captured > 0 then 1 else 0 end)`.as("sales"),
    sql<number>`sum(captured)`.as("captured"),
    sql<number>`sum(refunded)`.as("refunded"),
    sql<number>`sum(vends_ok)`.as("vends_ok"),
    sql<number>`sum(vends_failed)`.as("vends_failed"),
  ] as const;
}

interface TotalsRow {
  currency: string;
  sessions: number | string;
  sales: number | string | null;
  captured: number | string | null;
  refunded: number | string | null;
  vends_ok: number | string | null;
  vends_failed: number | string | null;
}

function toTotals(r: TotalsRow): Totals {
  const captured = Number(r.captured ?? 0);
  const refunded = Number(r.refunded ?? 0);
  return {
    currency: r.currency,
    sessions: Number(r.sessions),
    sales: Number(r.sales ?? 0),
    captured,
    refunded,
    net: captured - refunded,
    vendsOk: Number(r.vends_ok ?? 0),
    vendsFailed: Number(r.vends_failed ?? 0),
  };
}

export interface SalesFilter {
  from: string;
  to: string;
  unit?: string | undefined;
}

export async function totals(ctx: FleetContext, f: SalesFilter): Promise<Totals[]> {
  let q = ctx.db
    .selectFrom("sales")
    .select(totalsColumns())
    .where("day", ">=", f.from)
    .where("day", "<=", f.to);
  if (f.unit !== undefined) q = q.where("unit_id", "=", f.unit);
  const rows = await q.groupBy("currency").orderBy("currency").execute();
  return rows.map(toTotals);
}

export type SalesGroup = "day" | "unit" | "item";

export interface SalesRow extends Totals {
  /** The day, unit id or item number (as text) of the group. */
  key: string;
}

export async function salesBy(ctx: FleetContext, f: SalesFilter, group: SalesGroup): Promise<SalesRow[]> {
  const col = group === "day" ? "day" : group === "unit" ? "unit_id" : "item";
  let q = ctx.db
    .selectFrom("sales")
    .select([...totalsColumns(), sql<string | number>`${sql.ref(col)}`.as("key")])
    .where("day", ">=", f.from)
    .where("day", "<=", f.to);
  if (f.unit !== undefined) q = q.where("unit_id", "=", f.unit);
  const rows = await q.groupBy([col, "currency"]).orderBy(col).orderBy("currency").execute();
  return rows.map((r) => ({ ...toTotals(r), key: String(r.key) }));
}

/** Net sales per day and currency over `days` days ending today, zero-filled: what the charts draw. */
export interface DailySeries {
  days: string[];
  series: { currency: string; decimals: number; net: number[]; sales: number[] }[];
}

export async function dailySeries(ctx: FleetContext, days: number, unit?: string): Promise<DailySeries> {
  const to = dayOf(ctx.clock.now(), ctx.timeZone);
  const from = addDays(to, -(days - 1));
  const rows = await salesBy(ctx, { from, to, unit }, "day");
  const dayList = daysBetween(from, to);
  const currencies = [...new Set(rows.map((r) => r.currency))].sort();
  return {
    days: dayList,
    series: currencies.map((currency) => {
      const byDay = new Map(rows.filter((r) => r.currency === currency).map((r) => [r.key, r]));
      return {
        currency,
        decimals: currencyDecimals(currency),
        net: dayList.map((d) => byDay.get(d)?.net ?? 0),
        sales: dayList.map((d) => byDay.get(d)?.sales ?? 0),
      };
    }),
  };
}

function attentionOf(u: UnitSummary, now: number): string[] {
  const out: string[] = [];
  if (u.unresolved > 0) out.push(`${u.unresolved} unresolved session(s)`);
  if (u.backlogEvents >= BACKLOG_EVENTS_ALERT) out.push(`backlog of ${u.backlogEvents} events`);
  else if (
    u.backlogOldestAt !== null &&
    u.backlogEvents > 0 &&
    now - u.backlogOldestAt > BACKLOG_AGE_ALERT_MS
  )
    out.push(
      `backlog of ${u.backlogEvents} events, oldest ${Math.round((now - u.backlogOldestAt) / 60_000)} min old`,
    );
  return out;
}

export async function listUnits(ctx: FleetContext): Promise<UnitSummary[]> {
  const now = ctx.clock.now();
  const rows = await ctx.db
    .selectFrom("units")
    .select([
      "id",
      "label",
      "status",
      "fingerprint",
      "enrolled_at",
      "last_seen_at",
      "config_version",
      "release_version",
      "backlog_events",
      "backlog_oldest_at",
      "unresolved",
      "committed_seq",
    ])
    .orderBy("id")
    .execute();
  return rows.map((r) => {
    const lastSeenAt = r.last_seen_at === null ? null : Number(r.last_seen_at);
    const u: UnitSummary = {
      id: r.id,
      label: r.label,
      status: r.status,
      fingerprint: r.fingerprint,
      enrolledAt: Number(r.enrolled_at),
      lastSeenAt,
      online: r.status === "approved" && lastSeenAt !== null && now - lastSeenAt <= OFFLINE_AFTER_MS,
      configVersion: r.config_version,
      releaseVersion: r.release_version,
      backlogEvents: Number(r.backlog_events),
      backlogOldestAt: r.backlog_oldest_at === null ? null : Number(r.backlog_oldest_at),
      unresolved: Number(r.unresolved),
      committedSeq: Number(r.committed_seq),
      attention: [],
    };
    u.attention = attentionOf(u, now);
    return u;
  });
}

export interface RolloutRow {
  bundleId: string;
  unitId: string;
  state: "pending" | "applied" | "rolledBack";
  reason: string;
  updatedAt: number;
}

export interface BundleSummary {
  id: string;
  kind: "config" | "release";
  version: string;
  targets: string[];
  expiresAt: number | null;
  sha256: string;
  size: number;
  uploadedBy: string;
  uploadedAt: number;
  counts: { pending: number; applied: number; rolledBack: number };
  rollouts: RolloutRow[];
}

function parseTargets(text: string): string[] {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.map((t) => String(t)) : [text];
  } catch {
    return [text];
  }
}

export async function listBundles(ctx: FleetContext, unit?: string): Promise<BundleSummary[]> {
  const bundles = await ctx.db
    .selectFrom("bundles")
    .select([
      "id",
      "kind",
      "version",
      "targets",
      "expires_at",
      "sha256",
      "size",
      "uploaded_by",
      "uploaded_at",
    ])
    .orderBy("uploaded_at", "desc")
    .orderBy("id")
    .execute();
  let rq = ctx.db
    .selectFrom("rollouts")
    .select(["bundle_id", "unit_id", "state", "reason", "updated_at"])
    .orderBy("bundle_id")
    .orderBy("unit_id");
  if (unit !== undefined) rq = rq.where("unit_id", "=", unit);
  const rollouts = await rq.execute();
  const out = bundles.map(
    (b): BundleSummary => ({
      id: b.id,
      kind: b.kind,
      version: b.version,
      targets: parseTargets(b.targets),
      expiresAt: b.expires_at === null ? null : Number(b.expires_at),
      sha256: b.sha256,
      size: Number(b.size),
      uploadedBy: b.uploaded_by,
      uploadedAt: Number(b.uploaded_at),
      counts: { pending: 0, applied: 0, rolledBack: 0 },
      rollouts: [],
    }),
  );
  const byId = new Map(out.map((b) => [b.id, b]));
  for (const r of rollouts) {
    const b = byId.get(r.bundle_id);
    if (b === undefined) continue;
    b.rollouts.push({
      bundleId: r.bundle_id,
      unitId: r.unit_id,
      state: r.state,
      reason: r.reason,
      updatedAt: Number(r.updated_at),
    });
    if (r.state in b.counts) b.counts[r.state] += 1;
  }
  return unit === undefined ? out : out.filter((b) => b.rollouts.length > 0);
}

export interface Overview {
  now: number;
  today: string;
  weekFrom: string;
  units: { total: number; online: number; offline: number; pending: number; revoked: number };
  offline: UnitSummary[];
  attention: UnitSummary[];
  pending: UnitSummary[];
  todayTotals: Totals[];
  weekTotals: Totals[];
  bundles: BundleSummary[];
  chart: DailySeries;
}

export async function overview(ctx: FleetContext, chartDays = 14): Promise<Overview> {
  const now = ctx.clock.now();
  const today = dayOf(now, ctx.timeZone);
  const weekFrom = weekStart(today);
  const units = await listUnits(ctx);
  const approved = units.filter((u) => u.status === "approved");
  const bundles = await listBundles(ctx);
  return {
    now,
    today,
    weekFrom,
    units: {
      total: units.length,
      online: approved.filter((u) => u.online).length,
      offline: approved.filter((u) => !u.online).length,
      pending: units.filter((u) => u.status === "pending").length,
      revoked: units.filter((u) => u.status === "revoked").length,
    },
    offline: approved.filter((u) => !u.online),
    attention: approved.filter((u) => u.attention.length > 0),
    pending: units.filter((u) => u.status === "pending"),
    todayTotals: await totals(ctx, { from: today, to: today }),
    weekTotals: await totals(ctx, { from: weekFrom, to: today }),
    bundles: bundles.map((b) => ({ ...b, rollouts: [] })),
    chart: await dailySeries(ctx, chartDays),
  };
}

export interface Vend {
  sessionId: string;
  orderId: string;
  paymentId: string | null;
  item: number;
  price: number;
  result: string;
  captured: number;
  refunded: number;
  currency: string;
  vendsOk: number;
  vendsFailed: number;
  closedAt: number;
}

export interface UnitEventRow {
  seq: number;
  at: number;
  kind: string;
  data: unknown;
}

export interface UnitDetail {
  unit: UnitSummary;
  heartbeat: unknown;
  chart: DailySeries;
  totals30: Totals[];
  recentVends: Vend[];
  faults: UnitEventRow[];
  versions: UnitEventRow[];
  bundles: BundleSummary[];
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function eventsOf(
  ctx: FleetContext,
  unit: string,
  kind: "fault" | "version",
  limit: number,
): Promise<UnitEventRow[]> {
  const rows = await ctx.db
    .selectFrom("events")
    .select(["seq", "at", "kind", "data"])
    .where("unit_id", "=", unit)
    .where("kind", "=", kind)
    .orderBy("seq", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), at: Number(r.at), kind: r.kind, data: parseJson(r.data) }));
}

export async function unitDetail(ctx: FleetContext, id: string): Promise<UnitDetail | null> {
  const unit = (await listUnits(ctx)).find((u) => u.id === id);
  if (unit === undefined) return null;
  const hb = await ctx.db
    .selectFrom("units")
    .select("last_heartbeat")
    .where("id", "=", id)
    .executeTakeFirst();
  const chart = await dailySeries(ctx, 30, id);
  const vends = await ctx.db
    .selectFrom("sales")
    .select([
      "session_id",
      "order_id",
      "payment_id",
      "item",
      "price",
      "result",
      "captured",
      "refunded",
      "currency",
      "vends_ok",
      "vends_failed",
      "closed_at",
    ])
    .where("unit_id", "=", id)
    .orderBy("closed_at", "desc")
    .limit(25)
    .execute();
  return {
    unit,
    heartbeat: parseJson(hb?.last_heartbeat ?? null),
    chart,
    totals30: await totals(ctx, { from: chart.days[0] ?? "", to: chart.days.at(-1) ?? "", unit: id }),
    recentVends: vends.map((v) => ({
      sessionId: v.session_id,
      orderId: v.order_id,
      paymentId: v.payment_id,
      item: Number(v.item),
      price: Number(v.price),
      result: v.result,
      captured: Number(v.captured),
      refunded: Number(v.refunded),
      currency: v.currency,
      vendsOk: Number(v.vends_ok),
      vendsFailed: Number(v.vends_failed),
      closedAt: Number(v.closed_at),
    })),
    faults: await eventsOf(ctx, id, "fault", 25),
    versions: await eventsOf(ctx, id, "version", 10),
    bundles: await listBundles(ctx, id),
  };
}
