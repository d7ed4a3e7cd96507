/**
 * The console's `dex read` and `dex last` (issue 36): read the machine's DEX port now (after the quiet gate,
 * out of service while it runs) or show the last read the journal holds.
 */
import { type EvaDtsReport, parseEvaDts, toMinor } from "../../drivers/dex/evadts.js";
import { formatAmount } from "../core/money.js";
import type { DexReadRow } from "../journal/dexStore.js";
import { str } from "./consoleUnit.js";
import { CommandError, type CommandSpec } from "./control.js";
import type { DexReads } from "./dexReads.js";

function cv(counters: Record<string, unknown> | null, key: string): string | null {
  const v = counters?.[key];
  if (typeof v !== "object" || v === null) return null;
  const count = Reflect.get(v, "count");
  const value = Reflect.get(v, "value");
  return typeof count === "number" && typeof value === "number"
    ? `${count} vends, ${formatAmount(value)}`
    : null;
}

type Sales = EvaDtsReport["tokens"];

/** A since-init count and value of the file (DA2, DB2, TA2) as the console shows it, or null when absent. */
function device(report: EvaDtsReport, sales: Sales, digits: number): string | null {
  if (sales === null || sales.countInit === null || sales.valueInit === null) return null;
  const value = toMinor(sales.valueInit, report.decimals, digits);
  return value === null ? null : `${sales.countInit} vends, ${formatAmount(value)}`;
}

/** Each payment device of the read's file apart (cashless 1 DA2, cashless 2 DB2, tokens TA2). */
function devices(row: DexReadRow, digits: number): Record<string, string | null> {
  if (row.raw === null || row.raw.length === 0) return {};
  const report = parseEvaDts(Buffer.from(row.raw, "latin1"));
  return {
    cashless1: device(report, report.cashless1.sales, digits),
    cashless2: device(report, report.cashless2.sales, digits),
    tokens: device(report, report.tokens, digits),
  };
}

/** The machine's latest push of events (a session it opened by itself), as the console shows it. */
export function pushSummary(row: DexReadRow | null): Record<string, unknown> | null {
  if (row === null) return null;
  const events =
    row.raw === null ? [] : parseEvaDts(Buffer.from(row.raw, "latin1")).events.map((e) => e.code);
  return {
    at: new Date(row.at).toISOString(),
    outcome: row.outcome,
    bytes: row.raw?.length ?? 0,
    events: [...new Set(events)],
    error: row.error,
  };
}

/** A read as the console shows it (with the machine's latest push, when asked for). */
export function dexSummary(
  row: DexReadRow | null,
  push?: DexReadRow | null,
  digits = 2,
): Record<string, unknown> {
  const pushed = push === undefined ? {} : { push: pushSummary(push) };
  if (row === null) return { read: null, ...pushed };
  let counters: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = row.counters === null ? null : JSON.parse(row.counters);
    counters = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    counters = null;
  }
  return {
    read: {
      readId: row.readId,
      at: new Date(row.at).toISOString(),
      trigger: row.trigger,
      outcome: row.outcome,
      role: row.role,
      attempts: row.attempts,
      bytes: row.raw?.length ?? 0,
      g85: row.g85,
      warnings: row.warnings,
      error: row.error,
      paid: cv(counters, "paid"),
      cashless: cv(counters, "cashless"),
      cash: cv(counters, "cash"),
      ...devices(row, digits),
    },
    ...pushed,
  };
}

export function dexCommand(dex: () => DexReads | null): CommandSpec {
  return {
    audit: (a) => `dex ${str(a, "action") ?? "?"}`,
    run: async (a) => {
      const reads = dex();
      if (reads === null)
        throw new CommandError(
          "refused",
          "DEX is not enabled (set dex.enabled and dex.device in the config)",
        );
      const action = str(a, "action");
      if (action === "last") return dexSummary(reads.last(), reads.lastPush());
      if (action === "read") return dexSummary(await reads.read("console"));
      throw new CommandError("badArgs", "dex read|last");
    },
  };
}
