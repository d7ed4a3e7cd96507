/**
 * `vendd doctor`: each configured device and service is one `Check`, a function of injected dependencies
 * (so tests run without hardware) with its own timeout. The runner runs them one after another (two
 * checks must never hold the same device) and renders the table or JSON.
 */
import type { Clock, Timer } from "../core/clock.js";

export type CheckStatus = "ok" | "fail" | "skip";

/** What one check found. A `fail` detail says what to check, never a secret. */
export interface CheckOutcome {
  status: CheckStatus;
  detail: string;
}

export interface CheckResult extends CheckOutcome {
  check: string;
  /** How long the check took, ms. */
  ms: number;
}

export interface Check {
  name: string;
  /** The longest the check may take, ms; then it fails with `timeoutHint`. */
  timeoutMs: number;
  /** What to look at when the check gets no result in time. */
  timeoutHint: string;
  /** Runs the check. `signal` aborts when the time is up: release what was opened. */
  run(signal: AbortSignal): Promise<CheckOutcome>;
}

/** Runs the checks in order, each bounded by its timeout; never throws. */
export async function runChecks(checks: readonly Check[], clock: Clock): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    const started = clock.now();
    const outcome = await runOne(check, clock);
    results.push({ check: check.name, ...outcome, ms: Math.max(0, clock.now() - started) });
  }
  return results;
}

async function runOne(check: Check, clock: Clock): Promise<CheckOutcome> {
  const ac = new AbortController();
  const armed: { timer: Timer | null } = { timer: null };
  const timeout = new Promise<CheckOutcome>((resolve) => {
    armed.timer = clock.setTimer(check.timeoutMs, () => {
      ac.abort(new Error(`${check.name} check timed out`));
      resolve({ status: "fail", detail: `no result within ${check.timeoutMs} ms: ${check.timeoutHint}` });
    });
  });
  const work = check.run(ac.signal).catch(
    (err: unknown): CheckOutcome => ({
      status: "fail",
      detail: `unexpected error: ${err instanceof Error ? err.message : String(err)}`,
    }),
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    armed.timer?.cancel();
  }
}

/** True when no check failed (skipped checks do not count). */
export function allPassed(results: readonly CheckResult[]): boolean {
  return results.every((r) => r.status !== "fail");
}

/** The results as a text table: check, status, detail (the detail is not truncated). */
export function formatTable(results: readonly CheckResult[]): string {
  const rows = [["CHECK", "STATUS", "DETAIL"], ...results.map((r) => [r.check, r.status, r.detail])];
  const w0 = Math.max(...rows.map((r) => (r[0] ?? "").length));
  const w1 = Math.max(...rows.map((r) => (r[1] ?? "").length));
  const lines = rows.map(([c = "", s = "", d = ""]) => `${c.padEnd(w0)}  ${s.padEnd(w1)}  ${d}`.trimEnd());
  const failed = results.filter((r) => r.status === "fail").length;
  lines.push("", failed === 0 ? "all checks passed" : `${failed} check${failed === 1 ? "" : "s"} failed`);
  return `${lines.join("\n")}\n`;
}

/** The results as one JSON line: `{"ok":bool,"checks":[{check,status,detail,ms}]}`. */
export function formatJson(results: readonly CheckResult[]): string {
  return `${JSON.stringify({ ok: allPassed(results), checks: results })}\n`;
}

/** The message of an unknown thrown value, for details (drivers' messages carry no secrets). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The errno-style code of an error (`ENOENT`), searching one `cause` deep; null when none. */
export function errnoOf(err: unknown): string | null {
  for (let cur: unknown = err, depth = 0; depth < 3 && typeof cur === "object" && cur !== null; depth++) {
    if ("code" in cur && typeof cur.code === "string" && /^E[A-Z]+$/.test(cur.code)) return cur.code;
    cur = "cause" in cur ? cur.cause : undefined;
  }
  return null;
}
