/**
 * Three-way reconciliation of one unit's DEX reads (issue 36, dex.md §8), the pure part. Each window runs
 * from one accepted read to the next; in it, the change of the machine's own since-init counters is set
 * against the unit's journal (vends that ended VEND SUCCESS, by their approved amount) and the payment
 * service (captured minus refunded, tied to the journal by order id). Known honest gaps are classified, not
 * reported as losses: a vend at the window's edge that the next read counts, a counter that went backwards
 * (a reset: new baseline, with a note) and a replaced board (new baseline). No I/O, no clock.
 */

import type { CountValue, DexCounters } from "../../../drivers/dex/counters.js";
import type { Minor } from "../../core/money.js";

export interface DexReadPoint {
  readId: string;
  /** When the read completed (the unit's clock), ms. */
  at: number;
  counters: DexCounters;
  /**
   * The file's G85 check (`ok|swapped|bad|absent`); `bad` leaves the read's counters unverified: it is never
   * a window's edge (no difference, no counter reset from it) unless the machine is marked (`g85Marked`).
   */
  g85?: string | null;
}

/** A journal vend that ended VEND SUCCESS, paid cashless through this unit. */
export interface UnitVend {
  orderId: string;
  at: number;
  amount: Minor;
}

/**
 * A payment as the service reports it: captured minus refunded, by the order id the unit sent. It is placed
 * at the time of the unit's session with that order id (`DexReconInput.sessions`, or a vend's); `at` counts
 * only for an order id the unit never had (the end of the day the service reported it).
 */
export interface ServicePayment {
  orderId: string;
  at: number;
  amount: Minor;
}

export const FINDING_CLASSES = [
  "machineNotUnit",
  "capturedNoVend",
  "unitNotService",
  "cashShortfall",
  "edge",
  "counterReset",
  "boardReplaced",
  "unverified",
] as const;
export type FindingClass = (typeof FINDING_CLASSES)[number];

/** Classes that are explained, not losses. */
export const HONEST: ReadonlySet<FindingClass> = new Set([
  "edge",
  "counterReset",
  "boardReplaced",
  "unverified",
]);

/** What the report says of a read whose file failed its G85 check. */
export const UNVERIFIED_G85 = "unverified (G85)";

export interface Finding {
  class: FindingClass;
  count: number;
  /** Minor units, always positive: the size of the gap. */
  amount: Minor;
  note: string;
  orderIds: string[];
}

export interface DexWindow {
  fromRead: string;
  toRead: string;
  from: number;
  to: number;
  /** Null when the window is a new baseline (reset or replaced board). */
  dex: CountValue | null;
  journal: CountValue;
  service: CountValue;
  cash: { sales: Minor | null; kept: Minor | null; unaccounted: Minor | null };
  products: { selection: string; name: string | null; count: number; value: Minor }[];
  findings: Finding[];
  clean: boolean;
  /**
   * Reads with a bad G85 in or at the end of this window: skipped (the window runs to the next verified
   * read), or, on a machine marked as having a G85 that is always wrong, used as they are.
   */
  unverified: string[];
}

export interface DexReconInput {
  reads: readonly DexReadPoint[];
  vends: readonly UnitVend[];
  payments: readonly ServicePayment[];
  /** A journal vend this close to a read may be counted by the next read (default 120 s). */
  edgeMs?: number;
  /** False when the service's side is not known (no settlement run): the unit is not compared with it. */
  serviceCompared?: boolean;
  /** A manager marked the machine's G85 as always wrong: its `bad` reads are used, and the notes say so. */
  g85Marked?: boolean;
  /**
   * When each of the unit's sessions closed, by order id, delivered or not and whenever it was (before the
   * first read too): the service side is matched to them, so a payment belongs to its session's window, and to
   * none when the session lies outside every window (a retrofit unit's sales before its first read).
   */
  sessions?: ReadonlyMap<string, number>;
}

const sum = (xs: readonly { amount: Minor }[]): CountValue => ({
  count: xs.length,
  value: xs.reduce((a, x) => a + x.amount, 0),
});

function delta(a: CountValue | null, b: CountValue | null): CountValue | null {
  return a && b ? { count: b.count - a.count, value: b.value - a.value } : null;
}

/** Why the window cannot be compared (new baseline), or null. */
function baselineBreak(prev: DexCounters, cur: DexCounters): Finding | null {
  const id = (k: keyof DexCounters["identity"]) =>
    prev.identity[k] !== null && cur.identity[k] !== null && prev.identity[k] !== cur.identity[k];
  if (id("machine") || id("board") || id("initialised")) {
    const what = id("board") ? "control board" : id("machine") ? "machine serial" : "initialisation date";
    return finding("boardReplaced", 0, 0, `the ${what} changed: new baseline`, []);
  }
  for (const k of ["paid", "cashless", "cash"] as const) {
    const d = delta(prev[k], cur[k]);
    if (d && (d.count < 0 || d.value < 0)) {
      const p = prev[k];
      const c = cur[k];
      return finding(
        "counterReset",
        0,
        0,
        `${k} counter went backwards (${p?.count}→${c?.count} vends, ${p?.value}→${c?.value}): new baseline`,
        [],
      );
    }
  }
  return null;
}

function finding(cls: FindingClass, count: number, amount: Minor, note: string, orderIds: string[]): Finding {
  return { class: cls, count, amount, note, orderIds };
}

function productDelta(prev: DexCounters, cur: DexCounters): DexWindow["products"] {
  const before = new Map(prev.products.map((p) => [p.selection, p]));
  return cur.products.map((p) => {
    const b = before.get(p.selection);
    return {
      selection: p.selection,
      name: p.name,
      count: p.count - (b?.count ?? 0),
      value: p.value - (b?.value ?? 0),
    };
  });
}

function cashCheck(prev: DexCounters, cur: DexCounters): DexWindow["cash"] {
  const sales = delta(prev.cash, cur.cash)?.value ?? null;
  const kept = prev.cashNet !== null && cur.cashNet !== null ? cur.cashNet - prev.cashNet : null;
  const paid = delta(prev.paid, cur.paid)?.value ?? null;
  const cashless = delta(prev.cashless, cur.cashless)?.value ?? 0;
  const tokens = delta(prev.tokens, cur.tokens)?.value ?? 0;
  const unaccounted = paid !== null && sales !== null ? paid - cashless - tokens - sales : null;
  return { sales, kept, unaccounted };
}

function compare(
  w: DexWindow,
  vends: readonly UnitVend[],
  paidIds: ReadonlyMap<string, ServicePayment>,
  serviceKnown: boolean,
): void {
  const dex = w.dex;
  if (!dex) return;
  const diff = { count: dex.count - w.journal.count, value: dex.value - w.journal.value };
  if (diff.count > 0 || (diff.count === 0 && diff.value > 0))
    w.findings.push(
      finding(
        "machineNotUnit",
        diff.count,
        diff.value,
        "the machine counted cashless vends the unit did not journal",
        [],
      ),
    );
  if (diff.count < 0 || (diff.count === 0 && diff.value < 0)) {
    // The machine counted fewer vends than the unit journaled. A journaled vend the service did not capture
    // either explains one of them (it is `unitNotService`: one class per vend); what is left is captured
    // payments the machine did not count. With no such vend, the whole gap is named, as before.
    const paid = vends.filter((v) => paidIds.has(v.orderId));
    // (without the service's side, nothing is known to be unpaid)
    const unpaid = serviceKnown ? vends.filter((v) => !paidIds.has(v.orderId)) : [];
    const count = -diff.count - unpaid.length;
    const captured = (serviceKnown ? paid : vends).slice(-Math.max(1, count));
    if (unpaid.length === 0)
      w.findings.push(
        finding(
          "capturedNoVend",
          -diff.count,
          -diff.value,
          "payments captured for vends the machine did not count",
          captured.map((v) => v.orderId),
        ),
      );
    else if (count > 0 && captured.length > 0) {
      const value = -diff.value - sum(unpaid).value;
      w.findings.push(
        finding(
          "capturedNoVend",
          captured.length,
          value > 0 ? value : sum(captured).value,
          "payments captured for vends the machine did not count",
          captured.map((v) => v.orderId),
        ),
      );
    }
  }
  const c = w.cash;
  if (c.sales !== null && c.kept !== null && c.kept < c.sales)
    w.findings.push(
      finding(
        "cashShortfall",
        0,
        c.sales - c.kept,
        "the machine kept less cash than its cash sales (CA3 in − CA4 out < CA2)",
        [],
      ),
    );
  if (c.unaccounted !== null && c.unaccounted > 0)
    w.findings.push(
      finding(
        "cashShortfall",
        0,
        c.unaccounted,
        "paid vends (VA1) not covered by cash, cashless or tokens",
        [],
      ),
    );
}

/** Matches the unit against the service by order id, within the window. */
function serviceCheck(w: DexWindow, vends: readonly UnitVend[], payments: readonly ServicePayment[]): void {
  const byOrder = new Set(payments.map((p) => p.orderId));
  const missing = vends.filter((v) => !byOrder.has(v.orderId));
  if (missing.length > 0)
    w.findings.push(
      finding(
        "unitNotService",
        missing.length,
        sum(missing).value,
        "vends the unit journaled with no capture at the payment service",
        missing.map((v) => v.orderId),
      ),
    );
  const vendIds = new Set(vends.map((v) => v.orderId));
  const orphan = payments.filter((p) => !vendIds.has(p.orderId) && p.amount > 0);
  if (orphan.length > 0)
    w.findings.push(
      finding(
        "capturedNoVend",
        orphan.length,
        sum(orphan).value,
        "captured at the payment service with no successful vend in the journal",
        orphan.map((p) => p.orderId),
      ),
    );
}

/** A journal vend just before a read that the next read counted: both windows' gaps are the edge. */
function classifyEdges(windows: DexWindow[], vends: readonly UnitVend[], edgeMs: number): void {
  for (let i = 0; i + 1 < windows.length; i++) {
    const a = windows[i];
    const b = windows[i + 1];
    if (!a?.dex || !b?.dex) continue;
    const short = a.findings.find((f) => f.class === "capturedNoVend" && f.orderIds.length > 0);
    const extra = b.findings.find((f) => f.class === "machineNotUnit");
    if (!short || !extra || short.count !== extra.count || short.amount !== extra.amount) continue;
    const late = vends.filter((v) => v.at > a.to - edgeMs && v.at <= a.to);
    if (sum(late).value < short.amount) continue;
    short.class = "edge";
    short.note = "a vend just before the read; the next read counts it";
    extra.class = "edge";
    extra.note = "a vend of the previous window, counted by this read";
  }
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The honest finding of a window that skipped (or, at the end of the period, waits on) unverified reads. */
function unverifiedFinding(skipped: readonly DexReadPoint[], pending: boolean): Finding {
  const which = skipped.map((r) => `${r.readId} at ${iso(r.at)}`).join(", ");
  return finding(
    "unverified",
    0,
    0,
    pending
      ? `${UNVERIFIED_G85}: the counters of read ${which} are not compared (no difference, no counter reset); the next verified read bounds the window`
      : `${UNVERIFIED_G85}: read ${which} skipped; the window runs to the next verified read`,
    [],
  );
}

const within = (t: number, from: number, to: number) => t > from && t <= to;

/** The unit's sessions by order id: the ones given, and every journal vend's. */
function sessionTimes(input: DexReconInput): Map<string, number> {
  const out = new Map(input.sessions ?? []);
  for (const v of input.vends) out.set(v.orderId, v.at);
  return out;
}

/** Each order id in at most one class of a window: the first finding that names it keeps it. */
function oneClassPerVend(w: DexWindow): void {
  const seen = new Set<string>();
  for (const f of w.findings) {
    f.orderIds = f.orderIds.filter((id) => !seen.has(id));
    for (const id of f.orderIds) seen.add(id);
  }
}

/** Reconciles one unit's reads (in time order) against its journal and the service. */
export function reconcileDex(input: DexReconInput): { windows: DexWindow[]; clean: boolean } {
  const sorted = [...input.reads].sort((x, y) => x.at - y.at);
  const marked = input.g85Marked === true;
  const verified = (r: DexReadPoint) => marked || r.g85 !== "bad";
  // leading unverified reads (before any verified baseline) bound nothing
  const firstVerified = sorted.findIndex(verified);
  const reads = firstVerified === -1 ? [] : sorted.slice(firstVerified);
  const windows: DexWindow[] = [];
  let prev = reads[0];
  let skipped: DexReadPoint[] = [];
  for (let i = 1; i < reads.length && prev; i++) {
    const cur = reads[i];
    if (!cur) continue;
    if (!verified(cur)) {
      skipped.push(cur);
      continue;
    }
    windows.push(windowOf(input, prev, cur, skipped, marked));
    prev = cur;
    skipped = [];
  }
  const lastSkipped = skipped[skipped.length - 1];
  if (prev && lastSkipped) {
    // no verified read after these yet: a window to the last of them, its counters not compared
    const vends = input.vends.filter((v) => within(v.at, prev.at, lastSkipped.at));
    const when = sessionTimes(input);
    windows.push({
      fromRead: prev.readId,
      toRead: lastSkipped.readId,
      from: prev.at,
      to: lastSkipped.at,
      dex: null,
      journal: sum(vends),
      service: sum(
        input.payments.filter((p) => within(when.get(p.orderId) ?? p.at, prev.at, lastSkipped.at)),
      ),
      cash: { sales: null, kept: null, unaccounted: null },
      products: [],
      findings: [unverifiedFinding(skipped, true)],
      clean: true,
      unverified: skipped.map((r) => r.readId),
    });
  }
  classifyEdges(windows, input.vends, input.edgeMs ?? 120_000);
  for (const w of windows) w.clean = w.findings.every((f) => HONEST.has(f.class));
  return { windows, clean: windows.every((w) => w.clean) };
}

function windowOf(
  input: DexReconInput,
  prev: DexReadPoint,
  cur: DexReadPoint,
  skipped: readonly DexReadPoint[],
  marked: boolean,
): DexWindow {
  const vends = input.vends.filter((v) => v.at > prev.at && v.at <= cur.at);
  const when = sessionTimes(input);
  const pays = input.payments.filter((p) => within(when.get(p.orderId) ?? p.at, prev.at, cur.at));
  const paidIds = new Map(pays.map((p) => [p.orderId, p]));
  const broken = baselineBreak(prev.counters, cur.counters);
  const w: DexWindow = {
    fromRead: prev.readId,
    toRead: cur.readId,
    from: prev.at,
    to: cur.at,
    dex: broken ? null : delta(prev.counters.cashless, cur.counters.cashless),
    journal: sum(vends),
    service: sum(pays),
    cash: broken ? { sales: null, kept: null, unaccounted: null } : cashCheck(prev.counters, cur.counters),
    products: broken ? [] : productDelta(prev.counters, cur.counters),
    findings: broken ? [broken] : [],
    clean: true,
    unverified: marked
      ? [prev, cur].filter((r) => r.g85 === "bad").map((r) => r.readId)
      : skipped.map((r) => r.readId),
  };
  compare(w, vends, paidIds, input.serviceCompared !== false);
  if (input.serviceCompared !== false) serviceCheck(w, vends, pays);
  if (!marked && skipped.length > 0) w.findings.push(unverifiedFinding(skipped, false));
  oneClassPerVend(w);
  return w;
}
