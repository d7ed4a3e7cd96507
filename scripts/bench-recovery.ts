/**
 * Recovery at start-up (issue 12): a journal with 1,000 unresolved sessions, each a vend approved on a
 * reserved payment whose outcome was never recorded (a crash after the approval), while the emulator holds
 * the 1,000 matching reservations. `vendd run` (the built CLI, sim board, V10 against the emulator, journal
 * on disk) must settle all of them (capture: `unknownOutcome: capture`) before it goes in service. Measured:
 * spawn → "in service" on the notify socket; minus the same unit's start-up with nothing to recover (the
 * next start), that is the recovery time; the service's own time is the time the emulator had at least one
 * request in hand (the union of request start → response finish on its HTTP server, this process).
 * Target: recovery ≤ 2 s + the service's own time.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { loadConfig } from "../src/config/load.js";
import { paymentOptions } from "../src/config/seams.js";
import { systemClock } from "../src/core/clock.js";
import { openSqliteJournal } from "../src/journal/sqlite.js";
import { createPaymentDriver } from "../src/payment/factory.js";
import { notifyReceiver, spawnDaemon, stopChild } from "./bench-startup.js";
import type { BenchFigure } from "./benchFigure.js";
import {
  BENCH_PHONE,
  type BenchWorld,
  journalBase,
  round,
  startBenchWorld,
  writeBenchUnit,
} from "./benchRig.js";

const SESSIONS = 1000;
const TARGET_MS = 2000;

/** Writes `n` approved-but-unsettled sessions to the unit's journal, with real reservations at the emulator. */
async function unresolvedJournal(
  world: BenchWorld,
  configPath: string,
  secretsPath: string,
  n: number,
): Promise<void> {
  const loaded = loadConfig(configPath, { secretsFile: secretsPath });
  const journal = openSqliteJournal({
    path: loaded.config.journal.path,
    unitId: loaded.config.unit.id,
    clock: systemClock,
  });
  const driver = await createPaymentDriver(paymentOptions(loaded.config, loaded.secrets), {
    clock: systemClock,
    logger: pino({ level: "silent" }),
    ownsOrder: (o) => journal.ownsLiveOrder(o),
  });
  try {
    const pos = await driver.open();
    for (let i = 0; i < n; i++) {
      const id = `bench-recovery-${i}`;
      const price = 100 + (i % 50);
      const item = 1 + (i % 9);
      const orderId = journal.nextOrderId();
      journal.openSession({ id, orderId, flow: "selection", item, price, driver: "v10" });
      const intent = journal.recordIntent({
        sessionId: id,
        op: "start",
        orderId,
        paymentId: null,
        amount: price,
      });
      const ref = await driver.start({ orderId, amount: price, idempotencyKey: intent.idempotencyKey });
      world.emu.userSimulation.checkin(pos.beaconId, BENCH_PHONE);
      const accepted = world.emu.userSimulation.accept(pos.beaconId, BENCH_PHONE);
      if (accepted.status !== 200)
        throw new Error(`session ${i}: the customer could not accept (${accepted.status})`);
      const obs = await driver.status(ref);
      if (obs.state !== "reserved") throw new Error(`session ${i}: payment ${obs.state}, not reserved`);
      journal.completeIntent(intent.id, "done", "reserved");
      journal.setPaymentId(id, ref.id);
      journal.approveVend(id, item, price);
    }
    if (journal.unresolved().length !== n)
      throw new Error("the journal does not hold the unresolved sessions");
  } finally {
    await driver.close();
    journal.close();
  }
}

/** The union of the emulator's request-handling intervals while recording, ms. */
class ServiceClock {
  private busyMs = 0;
  private inFlight = 0;
  private since = 0;
  private readonly starts = new WeakSet<IncomingMessage>();
  private readonly onStart = (m: unknown) => {
    const req = requestOf(m);
    if (req === null) return;
    this.starts.add(req);
    if (this.inFlight++ === 0) this.since = performance.now();
  };
  private readonly onFinish = (m: unknown) => {
    const req = requestOf(m);
    if (req === null || !this.starts.has(req)) return;
    this.starts.delete(req);
    if (--this.inFlight === 0) this.busyMs += performance.now() - this.since;
  };

  constructor() {
    subscribe("http.server.request.start", this.onStart);
    subscribe("http.server.response.finish", this.onFinish);
  }

  get ms(): number {
    return this.busyMs;
  }

  close(): void {
    unsubscribe("http.server.request.start", this.onStart);
    unsubscribe("http.server.response.finish", this.onFinish);
  }
}

function requestOf(m: unknown): IncomingMessage | null {
  if (typeof m !== "object" || m === null || !("request" in m)) return null;
  const r: unknown = m.request;
  return typeof r === "object" && r !== null ? (r as IncomingMessage) : null;
}

/** spawn → STATUS "in service" on the notify socket, ms; the service's busy time meanwhile, ms. */
async function timeToService(
  configPath: string,
  secretsPath: string,
  dir: string,
): Promise<{ ms: number; serviceMs: number }> {
  const socket = join(dir, `notify-${process.hrtime.bigint()}`);
  const receiver = await notifyReceiver(socket);
  const service = new ServiceClock();
  let stderr = "";
  const t0 = performance.now();
  const child = spawnDaemon(configPath, secretsPath, socket);
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  try {
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`daemon exited (${code}):\n${stderr}`))),
    );
    const at = await Promise.race([receiver.wait(/STATUS=in service/, 120_000), exited]);
    return { ms: at - t0, serviceMs: service.ms };
  } finally {
    service.close();
    await stopChild(child);
    await receiver.close();
    rmSync(socket, { force: true });
  }
}

export async function recoveryTimes(
  sessions = SESSIONS,
  medium: "tmpfs" | "disk" = "disk",
): Promise<{ firstMs: number; baselineMs: number; serviceMs: number; settled: number }> {
  const world = await startBenchWorld();
  const dir = mkdtempSync(join(journalBase(medium), "vendd-bench-recovery-"));
  const files = writeBenchUnit(world, dir, { simBoard: true });
  try {
    await unresolvedJournal(world, files.configPath, files.secretsPath, sessions);
    const captures0 = world.emu.ledger().filter((e) => e.kind === "captured").length;
    const first = await timeToService(files.configPath, files.secretsPath, dir);
    const settled = world.emu.ledger().filter((e) => e.kind === "captured").length - captures0;
    const baseline = await timeToService(files.configPath, files.secretsPath, dir);
    return {
      firstMs: first.ms,
      baselineMs: baseline.ms,
      serviceMs: first.serviceMs - baseline.serviceMs,
      settled,
    };
  } finally {
    files.remove();
    rmSync(dir, { recursive: true, force: true });
    await world.close();
  }
}

export async function benchRecovery(): Promise<BenchFigure[]> {
  const out: BenchFigure[] = [];
  for (const medium of ["disk", "tmpfs"] as const) {
    const r = await recoveryTimes(SESSIONS, medium);
    const recovery = r.firstMs - r.baselineMs;
    const limit = TARGET_MS + r.serviceMs;
    out.push(
      {
        name: `recovery.${medium}.settle1000`,
        figure: round(recovery, 0),
        unit: "ms",
        target: `<= ${TARGET_MS} + service ${round(r.serviceMs, 0)}`,
        pass: recovery <= limit,
      },
      {
        name: `recovery.${medium}.serviceOwn`,
        figure: round(r.serviceMs, 0),
        unit: "ms",
        target: "-",
        pass: true,
      },
      {
        name: `recovery.${medium}.startToService`,
        figure: round(r.firstMs, 0),
        unit: "ms",
        target: "-",
        pass: true,
      },
      {
        name: `recovery.${medium}.baselineStart`,
        figure: round(r.baselineMs, 0),
        unit: "ms",
        target: "-",
        pass: true,
      },
      {
        name: `recovery.${medium}.captured`,
        figure: r.settled,
        unit: "sessions",
        target: `${SESSIONS}`,
        pass: r.settled === SESSIONS,
      },
    );
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchRecovery().then(
    (fs) => {
      for (const f of fs) process.stdout.write(`${JSON.stringify(f)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(
        `bench-recovery: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
