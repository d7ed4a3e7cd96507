/**
 * The three-way report's rows (issue 36), shared by `vendd fleet reconcile --dex` and the dashboard: one row per
 * finding of each window (a window without findings is one `matched` row), with its unit, amounts in minor
 * units and currency; CSV and a plain-text table of them.
 */
import { formatSignedAmount, type Minor } from "../../core/money.js";
import { csvCell } from "../web/csv.js";
import type { DexReport } from "./load.js";
import { HONEST, UNVERIFIED_G85 } from "./threeWay.js";

export interface DexRow {
  unit: string;
  from: string;
  to: string;
  fromRead: string;
  toRead: string;
  class: string;
  honest: boolean;
  count: number;
  amount: Minor;
  currency: string;
  dexCount: number | null;
  dexValue: Minor | null;
  journalCount: number;
  journalValue: Minor;
  serviceCount: number | null;
  serviceValue: Minor | null;
  note: string;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export function dexRows(r: DexReport): DexRow[] {
  const rows: DexRow[] = [];
  for (const u of r.units) {
    const compared = u.uncoveredDays.length === 0;
    for (const w of u.windows) {
      const base = {
        unit: u.unit,
        from: iso(w.from),
        to: iso(w.to),
        fromRead: w.fromRead,
        toRead: w.toRead,
        currency: u.currency ?? "",
        dexCount: w.dex?.count ?? null,
        dexValue: w.dex?.value ?? null,
        journalCount: w.journal.count,
        journalValue: w.journal.value,
        serviceCount: compared ? w.service.count : null,
        serviceValue: compared ? w.service.value : null,
      };
      const mark = u.g85Mark;
      const serviceNote =
        (compared ? "" : ` (service not compared: no reconciliation run for ${u.uncoveredDays.join(", ")})`) +
        (mark !== null && w.unverified.length > 0
          ? ` (${UNVERIFIED_G85}: read ${w.unverified.join(", ")} used as it is; ${mark.by} marked this machine's G85 as always wrong on ${iso(mark.at)}: ${mark.reason})`
          : "");
      if (w.findings.length === 0)
        rows.push({
          ...base,
          class: "matched",
          honest: true,
          count: 0,
          amount: 0,
          note: `${compared ? "machine, unit and service agree" : "machine and unit agree"}${serviceNote}`,
        });
      for (const f of w.findings)
        rows.push({
          ...base,
          class: f.class,
          honest: HONEST.has(f.class),
          count: f.count,
          amount: f.amount,
          note: `${f.note}${f.orderIds.length > 0 ? ` [${f.orderIds.join(" ")}]` : ""}${serviceNote}`,
        });
    }
  }
  return rows;
}

const COLUMNS = [
  "unit",
  "from",
  "to",
  "fromRead",
  "toRead",
  "class",
  "count",
  "amount",
  "currency",
  "dexCount",
  "dexValue",
  "journalCount",
  "journalValue",
  "serviceCount",
  "serviceValue",
  "note",
] as const;

/** Every row as CSV (amounts in minor units). */
export function dexCsv(rows: readonly DexRow[]): string {
  let s = `${COLUMNS.join(",")}\r\n`;
  for (const r of rows) s += `${COLUMNS.map((c) => csvCell(r[c] ?? "")).join(",")}\r\n`;
  return s;
}

const money = (m: Minor | null) => (m === null ? "-" : formatSignedAmount(m));

/**
 * What a clean report may claim: the service too only where every unit's days have a settlement run
 * (a day without one leaves the service's side out, and the report must not say it agrees).
 */
export function cleanVerdict(r: DexReport): string {
  const unverified = r.units.some((u) =>
    u.windows.some((w) => w.findings.some((f) => f.class === "unverified")),
  );
  return (
    (r.units.every((u) => u.uncoveredDays.length === 0)
      ? "machine, units and payment service agree"
      : "machine and units agree; the payment service not compared (no settlement run for some days)") +
    (unverified ? `; reads ${UNVERIFIED_G85} not compared` : "")
  );
}

/** A plain-text table: a head line, then one line per row. */
export function dexTable(r: DexReport, rows: readonly DexRow[]): string {
  const head = `DEX three-way ${r.from}..${r.to} (${r.timeZone}): ${
    r.units.length === 0 ? "no DEX reads in the period" : r.clean ? cleanVerdict(r) : "DIFFERENCES"
  }\n`;
  const lines = rows.map(
    (x) =>
      `${x.unit}  ${x.from}..${x.to}  ${x.class}${x.honest ? "" : " !"}  ${money(x.amount)} ${x.currency}  ` +
      `dex ${x.dexCount ?? "-"}/${money(x.dexValue)}  unit ${x.journalCount}/${money(x.journalValue)}  ` +
      `service ${x.serviceCount ?? "-"}/${money(x.serviceValue)}  ${x.note}\n`,
  );
  return head + lines.join("");
}
