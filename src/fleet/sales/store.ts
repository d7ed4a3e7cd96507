/**
 * Sales totals for the dashboard: per currency over a day range, grouped by day, unit or item, and the
 * zero-filled daily series the charts draw. Money sums are added by the database as integers and read back
 * as text into BigInt (issue 30): exact past 2^53, where a JS number (and better-sqlite3's default read of
 * an INTEGER) loses cents. Counts are read through Number().
 */
import { sql } from "kysely";
import { currencyDecimals } from "../../core/money.js";
import type { FleetContext } from "../context.js";
import { addDays, dayOf, daysBetween } from "../context.js";
import type { DailySeries, SalesFilter, SalesGroup, SalesRow, Totals, UnitChoice } from "./rows.js";

export type { DailySeries, SalesFilter, SalesGroup, SalesRow, Totals };

function totalsColumns() {
  return [
    "currency",
    sql<number>`count(*)`.as("sessions"),
    sql<number>`sum(case when captured > 0 then 1 else 0 end)`.as("sales"),
    sql<string | null>`cast(sum(captured) as text)`.as("captured"),
    sql<string | null>`cast(sum(refunded) as text)`.as("refunded"),
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
  const captured = BigInt(r.captured ?? 0);
  const refunded = BigInt(r.refunded ?? 0);
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
        // The chart's scale: a number is exact enough to draw.
        net: dayList.map((d) => Number(byDay.get(d)?.net ?? 0n)),
        sales: dayList.map((d) => byDay.get(d)?.sales ?? 0),
      };
    }),
  };
}

/** The units the sales page's filter offers (id and label, by id): the units table read here, not through units/. */
export async function unitChoices(ctx: FleetContext): Promise<UnitChoice[]> {
  return ctx.db.selectFrom("units").select(["id", "label"]).orderBy("id").execute();
}
