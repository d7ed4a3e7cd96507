import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { RecoveryReport } from "../engine/recovery.js";
import { backoffDelay } from "../payment/retry.js";
import { type ConnectPolicy, waitingSales } from "./connect.js";
import type { StatusReason } from "./status.js";

/** SQLite and errno codes of a journal failure that freeing space can heal. */
const HEALABLE_CODES: ReadonlySet<string> = new Set(["SQLITE_FULL", "ENOSPC"]);

/**
 * True when a journal failure can heal by itself: the disk (or the journal's size limit) was full. Not a
 * failed fsync (what was written may be lost: reliability.md §1), not corruption, not a bug: those need a
 * person. Searches the error and its causes (a JournalError wraps SQLite's error) for the code.
 */
export function healable(err: unknown): boolean {
  for (let cur: unknown = err, depth = 0; depth < 5 && typeof cur === "object" && cur !== null; depth++) {
    if ("code" in cur && typeof cur.code === "string" && HEALABLE_CODES.has(cur.code)) return true;
    cur = "cause" in cur ? cur.cause : undefined;
  }
  return false;
}

export interface HealDeps {
  clock: Clock;
  random: () => number;
  signal: AbortSignal;
  logger: Logger;
  policy: ConnectPolicy;
  /** One small write and commit; throws while the journal still cannot take writes. */
  probe(): void;
  /** Settles what the journal left unresolved (the failed sale among them), as a restart would. */
  recover(): Promise<RecoveryReport>;
  /** Brings the engine back in service (VendEngine.resume). */
  resume(): Promise<void>;
  /** Each failed re-check: why the unit stays out of service and when the next re-check is. */
  onSetback(reason: StatusReason): void;
}

/**
 * After a journal write failed for lack of space, the unit is out of service (engine.fail). While it is,
 * this re-checks the journal with a probe write, with capped exponential backoff and jitter; once a write
 * commits again it settles every unresolved session and resumes the engine, so freeing space brings the
 * unit back without a restart. Resolves true when back in service; false when aborted or when the journal
 * fails in a way that does not heal (then the unit stays out of service).
 */
export async function healJournal(first: unknown, deps: HealDeps): Promise<boolean> {
  const { clock, logger, signal } = deps;
  let failures = 0;
  let why = journalReason(first);
  while (!signal.aborted) {
    failures++;
    const delay = backoffDelay(failures, deps.policy, deps.random);
    deps.onSetback({ ...why, retryAt: clock.now() + delay });
    try {
      await clock.sleep(delay, signal);
    } catch {
      return false;
    }
    try {
      deps.probe();
    } catch (err) {
      if (!healable(err)) {
        logger.error({ err }, "journal re-check failed in a way that does not heal; out of service");
        return false;
      }
      why = journalReason(err);
      continue;
    }
    try {
      const report = await deps.recover();
      const waiting = waitingSales(report);
      if (waiting !== null) {
        why = { code: "paymentUnreachable", detail: waiting };
        continue;
      }
    } catch (err) {
      if (!healable(err)) {
        logger.error({ err }, "recovery after the journal failure failed; out of service");
        return false;
      }
      why = journalReason(err);
      continue;
    }
    await deps.resume();
    logger.info("journal takes writes again; back in service");
    return true;
  }
  return false;
}

function journalReason(err: unknown): Omit<StatusReason, "retryAt"> {
  return {
    code: "journal",
    detail: `journal cannot be written: ${err instanceof Error ? err.message : String(err)}`,
  };
}
