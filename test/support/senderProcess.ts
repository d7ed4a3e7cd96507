/**
 * The fleet sender (built `FleetLink` over a journal file) alone in a child process, for the SIGKILL tests:
 * it sends until the backlog is empty (exit 0), exits 3 if 200 rounds did not empty it, or dies at the fault
 * point armed through VENDD_FAULT_POINT. Killed after 30 s. Runs the build (`npx tsc -p tsconfig.build.json`).
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";

export interface SenderProcessOptions {
  /** The unit's journal file. */
  journal: string;
  unitId: string;
  /** The unit's private key (PEM file). */
  keyFile: string;
  fleetUrl: string;
  currency: string;
  batchEvents: number;
  /** `point@n` armed in the child, or null for a clean run. */
  faultPoint: string | null;
}

/** Resolves with the child's exit code, or the signal that ended it. */
export function runSenderProcess(o: SenderProcessOptions): Promise<NodeJS.Signals | number> {
  const dist = (p: string) => JSON.stringify(resolve("dist/src", p));
  const script = `
    import { readFileSync } from "node:fs";
    import pino from "pino";
    import { systemClock } from ${dist("core/clock.js")};
    import { fleetFaultPointsFromEnv } from ${dist("core/faults.js")};
    import { loadUnitKey } from ${dist("core/fleetAuth.js")};
    import { openSqliteJournal } from ${dist("journal/sqlite.js")};
    import { FleetLink } from ${dist("daemon/fleetLink.js")};
    const journal = openSqliteJournal({ path: ${JSON.stringify(o.journal)}, unitId: ${JSON.stringify(o.unitId)}, clock: systemClock, outbox: { currency: ${JSON.stringify(o.currency)} } });
    const link = new FleetLink({
      url: ${JSON.stringify(o.fleetUrl)}, unitId: ${JSON.stringify(o.unitId)}, key: loadUnitKey(readFileSync(${JSON.stringify(o.keyFile)}, "utf8")),
      outbox: journal, clock: systemClock, random: () => 0.5, logger: pino({ level: "silent" }),
      heartbeat: () => ({ state: "inService", reason: "", versions: { vendd: "t", config: null, release: null },
        journal: { ok: true, detail: "ok" }, vmc: "up", payment: "up", unresolved: 0 }),
      heartbeatMs: 60000, batchEvents: ${JSON.stringify(o.batchEvents)}, backlogWarnEvents: 1000, backlogWarnMs: 86400000, timeoutMs: 5000,
      backoff: { baseDelayMs: 2, maxDelayMs: 20 }, faults: fleetFaultPointsFromEnv(process.env),
    });
    for (let i = 0; i < 200 && journal.outboxStats().events > 0; i++) {
      const wait = await link.round();
      if (journal.outboxStats().events > 0) await systemClock.sleep(Math.min(wait, 20));
    }
    const left = journal.outboxStats().events;
    journal.close();
    process.exit(left === 0 ? 0 : 3);
  `;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, VENDD_FAULT_POINT: o.faultPoint ?? "" },
      stdio: ["ignore", "ignore", "inherit"],
      cwd: resolve("."),
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", fail);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      done(signal ?? code ?? -1);
    });
  });
}
