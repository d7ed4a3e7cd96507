/**
 * The three output formats of `vendd reconcile` and `vendd fleet reconcile` (issue 30): a table (summary,
 * money per currency, transfers, the lines that do not reconcile), CSV (every line) and JSON (the whole
 * result). Each is written piece by piece with the stream's back-pressure, and nothing spreads a result's
 * rows into arguments, so any size prints (125,000 lines that do not reconcile once overflowed the stack).
 * The three carry the same lines, amounts and currencies.
 */
import { EventEmitter, once } from "node:events";
import { formatAmount } from "../core/money.js";
import { problems, type ReconLine, type ReconResult } from "../fleet/reconcile/match.js";
import { formatColumns } from "./table.js";

/** Rows per piece written. */
const CHUNK = 2000;

function signed(minor: number | null): string {
  if (minor === null) return "";
  return minor < 0 ? `-${formatAmount(-minor)}` : formatAmount(minor);
}

function csvCell(v: string | number | null): string {
  const s = v === null ? "" : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const COLUMNS = [
  "day",
  "class",
  "unit_id",
  "session_id",
  "order_id",
  "reference",
  "expected",
  "reported",
  "currency",
  "reason",
] as const;

/** CSV of every line, in pieces (amounts in minor units, as the JSON has them). */
export function* csvPieces(r: ReconResult): Generator<string> {
  yield `${COLUMNS.join(",")}\r\n`;
  for (let i = 0; i < r.lines.length; i += CHUNK) {
    let piece = "";
    for (const l of r.lines.slice(i, i + CHUNK))
      piece += `${COLUMNS.map((c) => csvCell(l[c])).join(",")}\r\n`;
    yield piece;
  }
}

export function renderCsv(r: ReconResult): string {
  let s = "";
  for (const p of csvPieces(r)) s += p;
  return s;
}

/** The table, in pieces: summary, money per currency, transfers, then the lines that do not reconcile. */
export function* tablePieces(r: ReconResult, runId: number | null): Generator<string> {
  const head: string[] = [];
  head.push(
    `reconciliation ${r.from}..${r.to}${runId === null ? "" : ` (run ${runId})`}: ${r.clean ? "everything reconciles" : "DOES NOT RECONCILE"}`,
  );
  head.push(
    Object.entries(r.counts)
      .filter(([, n]) => n > 0)
      .map(([c, n]) => `${c} ${n}`)
      .join(", ") || "no lines",
  );
  if (r.totals.length > 0) {
    head.push("");
    head.push(
      formatColumns(
        ["currency", "captured", "paid", "refunded", "refund reported", "fees", "transferred"],
        r.totals.map((t) => [
          t.currency,
          signed(t.captured),
          signed(t.paid),
          signed(t.refunded),
          signed(t.refundReported),
          signed(t.fees),
          signed(t.transferred),
        ]),
        { right: [1, 2, 3, 4, 5, 6], width: 120 },
      ).trimEnd(),
    );
  }
  if (r.transfers.length > 0) {
    head.push("");
    head.push(
      formatColumns(
        ["date", "transfer", "currency", "expected", "received", "difference"],
        r.transfers.map((t) => [
          t.date,
          t.reference,
          t.currency,
          signed(t.expected),
          signed(t.received),
          signed(t.difference),
        ]),
        { right: [3, 4, 5], width: 120 },
      ).trimEnd(),
    );
  }
  yield `${head.join("\n")}\n`;
  const bad = problems(r).filter((l: ReconLine) => l.class !== "transfer");
  if (bad.length === 0) return;
  const text = formatColumns(
    ["day", "class", "unit", "session", "order", "expected", "reported", "currency"],
    bad.map((l) => [
      l.day,
      l.class,
      l.unit_id ?? "?",
      l.session_id ?? "-",
      l.order_id ?? "-",
      signed(l.expected),
      signed(l.reported),
      l.currency ?? "",
    ]),
    { right: [5, 6], width: 160, notes: bad.map((l) => l.reason) },
  );
  yield "\n";
  for (let i = 0; i < text.length; i += 1 << 20) yield text.slice(i, i + (1 << 20));
}

export function renderTable(r: ReconResult, runId: number | null): string {
  let s = "";
  for (const p of tablePieces(r, runId)) s += p;
  return s;
}

/** The whole result as JSON (`extra` first: the unit or the run id), its lines one per line. */
export function* jsonPieces(r: ReconResult, extra: Record<string, unknown>): Generator<string> {
  const { lines, ...rest } = r;
  const headObj = JSON.stringify({ ...extra, ...rest }, null, 2);
  yield `${headObj.slice(0, -2)},\n  "lines": [`;
  for (let i = 0; i < lines.length; i += CHUNK) {
    let piece = "";
    lines.slice(i, i + CHUNK).forEach((l, k) => {
      piece += `${i + k === 0 ? "" : ","}\n    ${JSON.stringify(l)}`;
    });
    yield piece;
  }
  yield `${lines.length === 0 ? "" : "\n  "}]\n}\n`;
}

/** Writes the result in `format` to `stream`, waiting for `drain` when the stream asks to. */
export async function writeResult(
  stream: { write(text: string): unknown },
  format: string,
  r: ReconResult,
  extra: { runId?: number; unit?: string },
): Promise<void> {
  const pieces =
    format === "json"
      ? jsonPieces(r, extra)
      : format === "csv"
        ? csvPieces(r)
        : tablePieces(r, extra.runId ?? null);
  for (const p of pieces)
    if (stream.write(p) === false && stream instanceof EventEmitter) await once(stream, "drain");
}
