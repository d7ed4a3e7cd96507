import type { SessionRow } from "../journal/journal.js";
import type { VendView } from "../journal/snapshot.js";
import type { VmcApproval, VmcRecord, VmcVendReport } from "./types.js";

/** A journal session's vend rows, in order. */
interface JournalGroup {
  session: SessionRow;
  rows: VendView[];
}

/** A VMC session's approvals, in order, each with what the VMC reported for its vend request. */
type VmcGroup = { approval: VmcApproval; report: VmcVendReport | undefined }[];

/**
 * A journal row the VMC may never have seen: the unit journals the approval before it sends it (write-ahead),
 * so a crash in between leaves a row with no outcome; a row `cancelled` is one the VMC did not take.
 */
function maybeUnsent(row: VendView): boolean {
  return row.outcome === null || row.outcome === "unknown" || row.outcome === "cancelled";
}

/**
 * The VMC → journal direction, matched by session and order, never by item or price: each VMC session's
 * approvals are aligned, in order, with one journal session's vend rows (journal sessions in the order they
 * were opened); each report is tied to its approval by the VMC's vend-request ordinal. A journal session
 * the VMC never saw may be passed over only if none of its rows claims a VMC-reported outcome. Problems: an
 * approval (or a vend the VMC reported) with no journal row, a row of another item or price than the
 * approval at its place, an outcome that contradicts the VMC's report, an approved vend whose session has no
 * payment reference, an approval of another amount than the request, a report with no approval.
 */
export function vmcProblems(
  sessions: readonly SessionRow[],
  vends: readonly VendView[],
  vmc: VmcRecord,
): string[] {
  const problems = vmc.violations.map((v) => `VMC protocol violation: ${v}`);
  const reports = new Map<number, VmcVendReport>();
  for (const r of vmc.vends) if (r.request !== undefined) reports.set(r.request, r);
  const approved = new Set(vmc.approvals.map((a) => a.request));
  for (const r of vmc.vends) {
    const claims = r.outcome === "success" || r.outcome === "failure" || r.outcome === "undispensed";
    if (claims && (r.request === undefined || !approved.has(r.request)))
      problems.push(`the VMC reported ${r.outcome} for item ${r.item} at ${r.price} without an approval`);
  }
  const groups = new Map<number, VmcGroup>();
  for (const a of vmc.approvals) {
    if (a.amount !== a.price) problems.push(`approved ${a.amount} for a request of ${a.price}`);
    const g = groups.get(a.session) ?? [];
    g.push({ approval: a, report: reports.get(a.request) });
    groups.set(a.session, g);
  }
  const journal: JournalGroup[] = sessions
    .map((session) => ({ session, rows: vends.filter((v) => v.sessionId === session.id) }))
    .filter((g) => g.rows.length > 0);
  const machine = [...groups.entries()].sort(([x], [y]) => x - y).map(([, g]) => g);
  return [...problems, ...align(machine, journal)];
}

/** The problems of pairing one VMC session with one journal session, position by position. */
function pairProblems(m: VmcGroup, j: JournalGroup): string[] {
  const problems: string[] = [];
  for (let k = 0; k < Math.max(m.length, j.rows.length); k++) {
    const a = m[k];
    const row = j.rows[k];
    if (a === undefined) {
      if (row !== undefined && !maybeUnsent(row))
        problems.push(
          `vend ${row.id} journaled ${row.outcome} in session ${j.session.orderId}, never approved at the VMC`,
        );
      continue;
    }
    if (row === undefined) {
      problems.push(noRow(a.approval, a.report));
      continue;
    }
    const at = `vend ${row.id} (session ${j.session.orderId})`;
    if (row.item !== a.approval.item || row.price !== a.approval.price)
      problems.push(
        `${at} journaled item ${row.item} at ${row.price}, the VMC approved item ${a.approval.item} at ${a.approval.price}`,
      );
    if (j.session.paymentId === null) problems.push(`approved ${at} has no payment reference`);
    const said = a.report?.outcome;
    if (said === "success" && (row.outcome === "failure" || row.outcome === "cancelled"))
      problems.push(`${at} at ${row.price} was delivered but journaled ${row.outcome}`);
    if (said === "failure" && row.outcome === "success")
      problems.push(`${at} at ${row.price} failed but journaled success`);
  }
  return problems;
}

function noRow(a: VmcApproval, report: VmcVendReport | undefined): string {
  const said = report === undefined ? "" : `, reported ${report.outcome}`;
  return `VMC vend request ${a.request} (item ${a.item} at ${a.price}${said}) has no journaled vend row`;
}

/** A journal session passed over: free when the VMC may never have seen it, else one problem per claimed row. */
function skipProblems(j: JournalGroup): string[] {
  return j.rows
    .filter((r) => !maybeUnsent(r))
    .map(
      (r) => `vend ${r.id} journaled ${r.outcome} in session ${j.session.orderId}, never approved at the VMC`,
    );
}

/**
 * The alignment with the fewest problems (a small edit-distance table: pair a VMC session with a journal
 * session, pass over a journal session, or leave a VMC session without one), then its problems. Ties
 * between alignments mean the two readings are equally consistent, so either reports the same.
 */
function align(machine: readonly VmcGroup[], journal: readonly JournalGroup[]): string[] {
  const n = machine.length;
  const m = journal.length;
  const cost: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  const at = (i: number, j: number) => cost[i]?.[j] ?? 0;
  const pairs = new Map<number, string[]>();
  const pair = (i: number, j: number): string[] => {
    const key = i * (m + 1) + j;
    const g = journal[j];
    const found = pairs.get(key) ?? (g === undefined ? [] : pairProblems(machine[i] ?? [], g));
    pairs.set(key, found);
    return found;
  };
  const skips = journal.map((g) => skipProblems(g).length);
  const skip = (j: number) => skips[j] ?? 0;
  const lone = (i: number) => (machine[i] ?? []).length;
  for (let i = n; i >= 0; i--) {
    for (let j = m; j >= 0; j--) {
      const row = cost[i] ?? [];
      if (i === n && j === m) row[j] = 0;
      else if (i === n) row[j] = skip(j) + at(i, j + 1);
      else if (j === m) row[j] = lone(i) + at(i + 1, j);
      else
        row[j] = Math.min(
          pair(i, j).length + at(i + 1, j + 1),
          skip(j) + at(i, j + 1),
          lone(i) + at(i + 1, j),
        );
    }
  }
  const problems: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const g = journal[j];
    const here = at(i, j);
    if (i < n && g !== undefined && pair(i, j).length + at(i + 1, j + 1) === here) {
      problems.push(...pair(i, j));
      i++;
      j++;
    } else if (g !== undefined && skip(j) + at(i, j + 1) === here) {
      problems.push(...skipProblems(g));
      j++;
    } else {
      for (const a of machine[i] ?? []) problems.push(noRow(a.approval, a.report));
      i++;
    }
  }
  return problems;
}
