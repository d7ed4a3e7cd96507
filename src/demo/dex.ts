/**
 * `vendd demo --dex` (issue 36): the demo unit's simulated machine keeps EVA-DTS audit counters that follow
 * the vends it delivers (its DEX port on a socat PTY, vendSource.ts), and the unit reads them through the
 * real reader twice: before the first vend and after the last. The reads themselves run in the caller's
 * layer (src/cli: the daemon's DexReads over the real DexReader), handed in as `DemoDexReads`; this file
 * says what the demo's config needs for them and sums up what they found against the unit's journal.
 */
import type { VendController } from "../../drivers/vmc/controller.js";
import type { VenddConfig } from "../config/load.js";
import type { DexReadRow } from "../journal/dexStore.js";
import type { SqliteJournal } from "../journal/sqlite.js";

/** What the demo needs of the unit's DEX reads (src/daemon/dexReads.ts DexReads). */
export interface DemoDexReads {
  /** One read now (after the quiet gate; the unit out of service meanwhile), journaled; its row. */
  read(): Promise<DexReadRow>;
  stop(): Promise<void>;
}

/** Starts the reads of one demo unit (its config has `dex.enabled` and `dex.device`), once the engine runs. */
export type DemoDexStarter = (unit: {
  config: VenddConfig;
  journal: SqliteJournal;
  vmc: VendController;
  engineIdle(): boolean;
  setBusy(busy: boolean): Promise<void>;
}) => DemoDexReads;

/** The `dex` section of the demo unit's config: the machine's DEX PTY, a short quiet gate. */
export function demoDexSection(device: string) {
  return { enabled: true, device, commId: "VND0000001", quietSeconds: 1, attempts: 3 };
}

export interface CountValue {
  count: number;
  value: number;
}

/** The demo's DEX result for one unit (its JSON summary's `dex`). */
export interface DemoDexSummary {
  /** Reads the unit made and journaled, and how many succeeded. */
  reads: number;
  okReads: number;
  /** The change of the machine's cashless counters (DA2, since initialisation) between the two reads. */
  machineCashless: CountValue | null;
  /** The unit's journal: delivered vends of captured sessions, and captured minus refunded (minor units). */
  unitCaptured: CountValue;
  /** The machine's counters equal the unit's captured sales. */
  agree: boolean;
  /** Why a read failed, if one did. */
  errors: string[];
}

/** The cashless counter of a journaled read's counters (JSON text), or null. */
export function cashlessOf(counters: string | null): CountValue | null {
  if (counters === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(counters);
  } catch {
    return null;
  }
  const c = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "cashless") : null;
  if (typeof c !== "object" || c === null) return null;
  const count: unknown = Reflect.get(c, "count");
  const value: unknown = Reflect.get(c, "value");
  return Number.isSafeInteger(count) && Number.isSafeInteger(value)
    ? { count: count as number, value: value as number }
    : null;
}

/** Delivered vends of the sessions with a done capture, and captured minus refunded, from the journal. */
export function unitCaptured(journal: SqliteJournal): CountValue {
  let count = 0;
  let value = 0;
  for (const s of journal.sessions()) {
    let captured = false;
    for (const i of journal.intents(s.id)) {
      if (i.state !== "done") continue;
      if (i.op === "capture") {
        captured = true;
        value += i.amount;
      } else if (i.op === "refund") value -= i.amount;
    }
    if (captured) count += journal.vends(s.id).filter((v) => v.outcome === "success").length;
  }
  return { count, value };
}

/** The two reads against the journal: the machine's cashless change against the unit's captured sales. */
export function summarizeDex(reads: readonly DexReadRow[], journal: SqliteJournal): DemoDexSummary {
  const ok = reads.filter((r) => r.outcome === "ok");
  const first = cashlessOf(ok[0]?.counters ?? null);
  const last = ok.length >= 2 ? cashlessOf(ok[ok.length - 1]?.counters ?? null) : null;
  const machineCashless =
    first !== null && last !== null
      ? { count: last.count - first.count, value: last.value - first.value }
      : null;
  const unit = unitCaptured(journal);
  return {
    reads: reads.length,
    okReads: ok.length,
    machineCashless,
    unitCaptured: unit,
    agree:
      machineCashless !== null &&
      machineCashless.count === unit.count &&
      machineCashless.value === unit.value,
    errors: reads.flatMap((r) => (r.error === null ? [] : [r.error])),
  };
}

/**
 * The unit's reads around its vends: the baseline read before the first vend, `vend()` (the demo's loop),
 * then the closing read once the engine is idle (skipped when the demo is stopped at once). The reads are
 * journaled by the reads themselves (and, with a fleet link, put in the outbox in the same transaction).
 */
export async function runDexReads(
  start: DemoDexStarter,
  unit: {
    config: VenddConfig;
    journal: SqliteJournal;
    engine: {
      readonly current: { tag: string };
      readonly failure: Error | null;
      setOutOfService(reason: string | null): Promise<void>;
      whenIdle(): Promise<void>;
    };
    source: { vmc: VendController };
  },
  signal: AbortSignal,
  vend: () => Promise<void>,
): Promise<DemoDexSummary> {
  const { engine } = unit;
  const reads = start({
    config: unit.config,
    journal: unit.journal,
    vmc: unit.source.vmc,
    engineIdle: () => engine.current.tag === "idle" && engine.failure === null,
    setBusy: (busy) => engine.setOutOfService(busy ? DEMO_DEX_BUSY : null),
  });
  const rows: DexReadRow[] = [];
  // Stopped at once (a second Ctrl-C): a read waiting at the quiet gate gives up.
  const onAbort = () => void reads.stop();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    if (!signal.aborted) rows.push(await reads.read());
    await vend();
    await engine.whenIdle();
    // An engine that failed never gets idle again: the gate would wait its 30 minutes for nothing.
    if (!signal.aborted && engine.failure === null) rows.push(await reads.read());
  } finally {
    signal.removeEventListener("abort", onAbort);
    await reads.stop();
  }
  return summarizeDex(rows, unit.journal);
}

/** What the demo unit's screen says while a read runs (the daemon's DEX_BUSY_REASON). */
const DEMO_DEX_BUSY = "Reading machine audit";
