import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { Notifier } from "../core/sdnotify.js";
import { type StatusReason, statusLine, type UnitStatus } from "./status.js";
import type { Daemon } from "./types.js";

/**
 * What an operator needs to know about a journal that cannot be used at start. The journal's own check
 * throws a `JournalError` carrying `path`, a short `cause`, the documented `nextStep` and a distinct code
 * for "locked by another process"; they are read defensively here, so that any error from opening the
 * journal still gives a useful message.
 */
export interface JournalProblem {
  path: string;
  cause: string;
  nextStep: string;
  /** Another process holds the journal: refuse to start at once (no degraded state). */
  locked: boolean;
}

const DEFAULT_NEXT_STEP =
  'Run `vendd doctor`; docs/operators.md "Recovering a unit" says how to restore the journal from a backup, or move it aside and start fresh.';

/** Reads the problem out of whatever opening the journal threw. */
export function journalProblem(err: unknown, configuredPath: string): JournalProblem {
  const rec: Partial<Record<string, unknown>> = typeof err === "object" && err !== null ? { ...err } : {};
  const { path, nextStep } = rec;
  // Error.cause is an own property, but not enumerable when set by the Error constructor.
  const cause: unknown = err instanceof Error ? err.cause : rec.cause;
  const message = err instanceof Error ? err.message : String(err);
  return {
    path: typeof path === "string" && path !== "" ? path : configuredPath,
    cause:
      typeof cause === "string" && cause !== ""
        ? cause
        : cause instanceof Error && cause.message !== ""
          ? cause.message
          : message,
    nextStep: typeof nextStep === "string" && nextStep !== "" ? nextStep : DEFAULT_NEXT_STEP,
    locked: rec.code === "locked",
  };
}

export interface JournalUnusableDeps {
  unitId: string;
  logger: Logger;
  notifier: Notifier;
  display: CheckinDisplay;
  stderr: (text: string) => void;
  now: () => number;
  /** The journal's own account of the refusal (path, cause, detail, next step), when it gave one. */
  refusal?: string | null;
}

/**
 * The unit whose journal cannot be used: it stays up (no exit, so no restart loop) and out of service,
 * with the cause on its screen, path + cause + next step on stderr and in the log at error level, and
 * READY sent with a STATUS saying so. Nothing else is opened: no payment request leaves, the VMC is never
 * enabled. No retry loop either: an operator must act (then restart the unit).
 */
export function journalUnusable(problem: JournalProblem, deps: JournalUnusableDeps): Daemon {
  const { path, cause, nextStep } = problem;
  deps.display.show({ kind: "outOfService", reason: cause });
  deps.stderr(`vendd run: ${deps.refusal ?? `the journal ${path} cannot be used: ${cause}\n${nextStep}\n`}`);
  deps.logger.error({ path, cause, nextStep }, "journal unusable: out of service until an operator acts");
  const reason: StatusReason = {
    code: "journal",
    detail: `journal ${path} unusable: ${cause}`,
    retryAt: null,
  };
  const status: UnitStatus = { inService: false, reasons: [reason] };
  deps.notifier.ready(statusLine(deps.unitId, status, deps.now()));
  const stopWatchdog = deps.notifier.startWatchdog();
  // Nothing else runs: this timer keeps the process up until it is told to stop.
  const keepAlive = setInterval(() => {}, 3_600_000);
  return {
    status: () => status,
    engine: null,
    failed: new Promise<Error>(() => {}),
    onStatus: () => () => {},
    async stop() {
      deps.notifier.stopping();
      clearInterval(keepAlive);
      stopWatchdog();
      await deps.display.close();
    },
  };
}
