/**
 * `vendd demo --fleet` (issue 16): a fleet server on the embedded default (SQLite in a temporary directory,
 * or `--fleet-db FILE`) with the dashboard, and three simulated units (src/demo/unit.ts, each with its own
 * emulator, simulated machine and customers) that vend and report through the real outbox and the real
 * signed sender (src/daemon/fleetUnit.ts). Each unit has its own key, enrols through the real `/enroll` and
 * is approved; a `manager` account gets a random password, printed once with the dashboard URL (or written
 * to `--fleet-password-file`). With `--vends N` it stops once every unit did N vends and the fleet has every
 * event, and compares the fleet's sales with the units' journals.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { writeFileAtomic } from "../core/atomicFile.js";
import { systemClock } from "../core/clock.js";
import { generateUnitKey, loadUnitKey, type UnitKeyPair } from "../core/fleetAuth.js";
import { createLogger } from "../core/log.js";
import { formatAmount } from "../core/money.js";
import { seededRandom } from "../core/random.js";
import { SecretRegistry } from "../core/secrets.js";
import { startFleetUnit } from "../daemon/fleetUnit.js";
import type { DemoDexSummary } from "../demo/dex.js";
import { type DemoSummary, runDemo } from "../demo/unit.js";
import type { FinishedSession } from "../engine/options.js";
import type { FleetContext } from "../fleet/context.js";
import { registerFleetDashboard } from "../fleet/features.js";
import { type RunningFleetServer, startFleetServer } from "../fleet/server.js";
import { approveUnit } from "../fleet/units/index.js";
import { addUser, removeUser } from "../fleet/web/accounts.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { type DemoFleetDex, demoDexReads, demoFleetDex } from "./demoDex.js";
import { enroll } from "./fleetEnroll.js";
import { packageVersion } from "./version.js";

export const DEMO_FLEET_UNITS = 3;
export const DEMO_MANAGER = "manager";

export interface DemoFleetOptions {
  vends: number | null;
  json: boolean;
  seed: number;
  /** SQLite file kept after the demo; null = a temporary directory removed afterwards. */
  fleetDb: string | null;
  /** Where the manager's password is written (mode 0600) instead of printed. */
  passwordFile: string | null;
  host: string;
  port: number;
  logLevel: string;
  /** Stops at once (a second Ctrl-C). */
  signal: AbortSignal;
  /** Each unit finishes the vend in progress, delivers its events and stops (a first Ctrl-C). */
  finish: AbortSignal;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  /**
   * `--dex`: each unit's machine keeps DEX audit counters, the unit reads them before its first vend and
   * after its last, and the summary carries the fleet's three-way report of the demo's days (demoDex.ts).
   */
  dex?: boolean;
}

export interface DemoFleetSummary {
  units: number;
  vends: number;
  captured: number;
  /** Events the fleet committed during this run, all units. */
  fleetEvents: number;
  /** Captured minus refunded on the fleet (this run's sales), decimal. */
  fleetSalesTotal: string;
  /** Captured minus refunded in the units' journals (done intents), decimal. */
  journalsTotal: string;
  consistent: boolean;
  /** With `--dex`: the three-way report, and per unit its two reads against its journal. */
  dex?: DemoFleetDex & { reads: (DemoDexSummary & { unit: string })[] };
}

/** What one unit's journal says at the end, read before it closes. */
interface UnitEnd {
  id: string;
  lastSeq: number;
  backlog: number;
  net: number;
}

/** Captured minus refunded in a journal: its done capture and refund intents. */
function journalNet(journal: SqliteJournal): number {
  let net = 0;
  for (const s of journal.sessions()) {
    for (const i of journal.intents(s.id)) {
      if (i.state !== "done") continue;
      if (i.op === "capture") net += i.amount;
      else if (i.op === "refund") net -= i.amount;
    }
  }
  return net;
}

/** Per unit: committed seq, events stored and net sales on the fleet. */
async function fleetCounts(
  ctx: FleetContext,
  ids: readonly string[],
): Promise<Map<string, { committed: number; events: number; net: number }>> {
  const out = new Map<string, { committed: number; events: number; net: number }>();
  for (const id of ids) {
    const unit = await ctx.db
      .selectFrom("units")
      .select("committed_seq")
      .where("id", "=", id)
      .executeTakeFirst();
    const ev = await ctx.db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("unit_id", "=", id)
      .executeTakeFirst();
    const sales = await ctx.db
      .selectFrom("sales")
      .select(["captured", "refunded"])
      .where("unit_id", "=", id)
      .execute();
    out.set(id, {
      committed: Number(unit?.committed_seq ?? 0),
      events: Number(ev?.n ?? 0),
      net: sales.reduce((a, r) => a + Number(r.captured) - Number(r.refunded), 0),
    });
  }
  return out;
}

/** The unit's key in `dir`, made (mode 0600) when it does not exist yet. */
function unitKey(file: string): UnitKeyPair {
  if (existsSync(file)) return loadUnitKey(readFileSync(file, "utf8"));
  const made = generateUnitKey();
  writeFileAtomic(file, made.privatePem, { mode: 0o600 });
  return made;
}

async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** The manager account (a fresh random password) and every unit enrolled with its key and approved. */
async function enrolUnits(
  server: RunningFleetServer,
  ids: readonly string[],
  keysDir: string,
  secrets: SecretRegistry,
): Promise<string> {
  const ctx = server.ctx;
  const password = randomBytes(12).toString("base64url");
  secrets.addSecret(password);
  await removeUser(ctx.db, DEMO_MANAGER);
  await addUser(ctx.db, DEMO_MANAGER, password, "manager", ctx.clock.now());
  for (const id of ids) {
    const key = unitKey(join(keysDir, `${id}.key`));
    const status = await enroll(server.url, key, id, `vendd demo unit ${id}`);
    if (status === "pending") await approveUnit(ctx, id, DEMO_MANAGER);
  }
  return password;
}

/** Where the dashboard is and how to log in (the password printed, or written 0600 to a file). */
function announce(
  opts: DemoFleetOptions,
  server: RunningFleetServer,
  password: string,
  ids: readonly string[],
) {
  const dashboard = `${server.url}/`;
  if (opts.passwordFile !== null) {
    writeFileAtomic(opts.passwordFile, `${password}\n`, { mode: 0o600 });
    opts.err.write(
      `fleet dashboard: ${dashboard}  user: ${DEMO_MANAGER}  password in ${opts.passwordFile}\n`,
    );
  } else {
    opts.err.write(`fleet dashboard: ${dashboard}  user: ${DEMO_MANAGER}  password: ${password}\n`);
  }
  opts.err.write(
    `${DEMO_FLEET_UNITS} units vending (${ids.join(", ")}); database ${server.where}${opts.vends === null ? "; Ctrl-C to stop (twice: at once)" : ""}\n`,
  );
}

type Counts = Awaited<ReturnType<typeof fleetCounts>>;

/** Every 10 s, the events each unit delivered during this run (not with --json). */
function startProgress(opts: DemoFleetOptions, ctx: FleetContext, ids: readonly string[], before: Counts) {
  if (opts.json) return null;
  const timer = setInterval(() => {
    fleetCounts(ctx, ids).then(
      (now) => {
        const parts = ids.map((id) => {
          const n = now.get(id);
          const b = before.get(id);
          return `${id} ${(n?.events ?? 0) - (b?.events ?? 0)} events`;
        });
        opts.err.write(`fleet: ${parts.join(", ")}\n`);
      },
      () => undefined,
    );
  }, 10_000);
  timer.unref();
  return timer;
}

/** A vend as it happens, one line (`demo-2 vend 4: 16.50 DKK captured`; a refusal says why). */
export function vendLine(unit: string, s: FinishedSession, n: number, currency: string): string {
  const why = s.result === "captured" || s.reason === "" ? "" : ` (${s.reason})`;
  return `${unit} vend ${n}: ${formatAmount(s.price)} ${currency} ${s.result}${why}\n`;
}

/** One demo unit with its fleet link; what its journal says at the end goes to `ends`. */
function runUnit(
  opts: DemoFleetOptions,
  d: { id: string; i: number; url: string; keysDir: string; logger: Logger; secrets: SecretRegistry },
  ends: UnitEnd[],
): Promise<DemoSummary> {
  const { id, i, logger } = d;
  return runDemo({
    vends: opts.vends,
    driver: "v10",
    legacyMode: "reservation",
    display: "none",
    journalPath: null,
    seed: opts.seed + i,
    out: opts.out,
    logger: logger.child({ unit: id }),
    secrets: d.secrets,
    signal: opts.signal,
    finishSignal: opts.finish,
    vmcLink: "sim",
    unitId: id,
    fleet: { url: d.url, keyFile: join(d.keysDir, `${id}.key`), heartbeatSeconds: 5 },
    ...(opts.dex === true ? { dex: demoDexReads(systemClock, logger.child({ unit: id })) } : {}),
    ...(opts.json
      ? {}
      : { onSessionFinished: (s, n, currency) => opts.err.write(vendLine(id, s, n, currency)) }),
    onJournal: async ({ config, journal }) => {
      const link = startFleetUnit({
        config,
        journal,
        clock: systemClock,
        random: seededRandom(opts.seed * 7 + i),
        logger: logger.child({ unit: id }),
        version: packageVersion(),
        status: () => ({ inService: true, reasons: [] }),
        onStatus: () => () => undefined,
      });
      return async () => {
        // The fleet must have every event before the journal closes: the link sends while this waits.
        const limit = Date.now() + (opts.signal.aborted ? 15_000 : 60_000);
        while (journal.outboxStats().events > 0 && Date.now() < limit) await sleep(100, opts.signal);
        const s = journal.outboxStats();
        ends.push({ id, lastSeq: s.lastSeq, backlog: s.events, net: journalNet(journal) });
        await link?.stop();
      };
    },
  });
}

/** The fleet's counts against the units' journals: what this run added on the fleet, and every mismatch. */
function compare(ids: readonly string[], before: Counts, after: Counts, ends: readonly UnitEnd[]) {
  const problems: string[] = [];
  let fleetEvents = 0;
  let fleetNet = 0;
  let journalsNet = 0;
  for (const id of ids) {
    const a = after.get(id);
    const b = before.get(id);
    const end = ends.find((e) => e.id === id);
    if (a === undefined || b === undefined || end === undefined) {
      problems.push(`${id}: no result`);
      continue;
    }
    fleetEvents += a.committed - b.committed;
    fleetNet += a.net - b.net;
    journalsNet += end.net;
    if (end.backlog > 0) problems.push(`${id}: ${end.backlog} events not delivered`);
    if (a.committed !== end.lastSeq)
      problems.push(`${id}: the fleet committed seq ${a.committed}, the journal assigned ${end.lastSeq}`);
    if (a.events - b.events !== a.committed - b.committed)
      problems.push(`${id}: ${a.events - b.events} events stored for ${a.committed - b.committed} seqs`);
    if (a.net - b.net !== end.net)
      problems.push(`${id}: fleet sales ${formatAmount(a.net - b.net)}, journal ${formatAmount(end.net)}`);
  }
  return { problems, fleetEvents, fleetNet, journalsNet };
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The fleet's three-way report over the demo's days, with each unit's two reads against its journal; a read
 * that failed, a machine whose counters differ from its unit's captured sales, or a finding is a problem.
 */
async function fleetDex(
  ctx: FleetContext,
  from: string,
  r: {
    ids: readonly string[];
    summaries: readonly DemoSummary[];
    problems: string[];
    json: boolean;
    err: NodeJS.WritableStream;
  },
): Promise<NonNullable<DemoFleetSummary["dex"]>> {
  const { ids, summaries, problems, json, err } = r;
  const { dex: report, table } = await demoFleetDex(ctx.db, from, utcDay(Date.now()));
  if (!json) err.write(`\n${table}`);
  const reads = ids.map((unit, i) => {
    const d = summaries[i]?.dex;
    if (d === undefined) problems.push(`${unit}: no DEX reads`);
    else {
      for (const e of d.errors) problems.push(`${unit}: DEX read failed: ${e}`);
      if (!d.agree)
        problems.push(`${unit}: the machine's DEX counters differ from the unit's captured sales`);
    }
    return {
      unit,
      ...(d ?? {
        reads: 0,
        okReads: 0,
        machineCashless: null,
        unitCaptured: { count: 0, value: 0 },
        agree: false,
        errors: [],
      }),
    };
  });
  if (!report.clean)
    problems.push("the fleet's three-way DEX report has differences (vendd fleet reconcile --dex)");
  return { ...report, reads };
}

export async function runDemoFleet(opts: DemoFleetOptions): Promise<DemoFleetSummary> {
  const tempDir = mkdtempSync(join(tmpdir(), "vendd-demo-fleet-"));
  const dbFile = opts.fleetDb ?? join(tempDir, "fleet.db");
  // Keys beside a kept database, so a second run on it is the same units (the fleet knows them by key).
  const keysDir = opts.fleetDb === null ? join(tempDir, "keys") : `${opts.fleetDb}.keys`;
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  const secrets = new SecretRegistry();
  const logger = createLogger({ level: opts.logLevel, secrets });
  const server = await startFleetServer({
    db: dbFile,
    host: opts.host,
    port: opts.port,
    timeZone: "UTC",
    logger: logger.child({ component: "fleet-server" }),
    plugins: [(app, ctx) => registerFleetDashboard(app, ctx)],
  });
  let progress: ReturnType<typeof setInterval> | null = null;
  try {
    const ctx = server.ctx;
    const ids = Array.from({ length: DEMO_FLEET_UNITS }, (_, i) => `demo-${i + 1}`);
    const password = await enrolUnits(server, ids, keysDir, secrets);
    const before = await fleetCounts(ctx, ids);
    announce(opts, server, password, ids);
    progress = startProgress(opts, ctx, ids, before);

    const ends: UnitEnd[] = [];
    const firstDay = utcDay(Date.now());
    const summaries: DemoSummary[] = await Promise.all(
      ids.map((id, i) => runUnit(opts, { id, i, url: server.url, keysDir, logger, secrets }, ends)),
    );
    const { problems, fleetEvents, fleetNet, journalsNet } = compare(
      ids,
      before,
      await fleetCounts(ctx, ids),
      ends,
    );
    for (const [i, s] of summaries.entries())
      for (const p of s.problems) problems.push(`${ids[i] ?? "?"}: ${p}`);
    const dex =
      opts.dex === true
        ? await fleetDex(ctx, firstDay, { ids, summaries, problems, json: opts.json, err: opts.err })
        : null;
    for (const p of problems) opts.err.write(`inconsistent: ${p}\n`);
    return {
      units: ids.length,
      vends: summaries.reduce((a, s) => a + s.vends, 0),
      captured: summaries.reduce((a, s) => a + s.captured, 0),
      fleetEvents,
      fleetSalesTotal: formatAmount(fleetNet),
      journalsTotal: formatAmount(journalsNet),
      consistent: problems.length === 0 && summaries.every((s) => s.consistent),
      ...(dex === null ? {} : { dex }),
    };
  } finally {
    if (progress !== null) clearInterval(progress);
    // A browser left open on the dashboard keeps connections alive: the demo is over, so they are cut.
    const closing = server.close();
    server.app.server.closeAllConnections();
    await closing;
    rmSync(tempDir, { recursive: true, force: true });
  }
}
