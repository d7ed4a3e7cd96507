/**
 * The console's `dex read` and `dex last` (issue 36): read the machine's DEX port now (after the quiet gate,
 * out of service while it runs) or show the last read the journal holds.
 */
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

/** A read as the console shows it. */
export function dexSummary(row: DexReadRow | null): Record<string, unknown> {
  if (row === null) return { read: null };
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
    },
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
      if (action === "last") return dexSummary(reads.last());
      if (action === "read") return dexSummary(await reads.read("console"));
      throw new CommandError("badArgs", "dex read|last");
    },
  };
}
