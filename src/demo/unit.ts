import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import type { CheckinDisplay, Screen } from "../../drivers/display/display.js";
import { createDisplay } from "../../drivers/display/factory.js";
import { sameScreen } from "../../drivers/display/render.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { checkConsistency } from "../check/consistency.js";
import { buildConfig, type Secrets, secretValues, type VenddConfig } from "../config/load.js";
import type { BoardName } from "../config/schema.js";
import { displayOptions, engineOptions, journalOptions, paymentOptions } from "../config/seams.js";
import { type Clock, systemClock } from "../core/clock.js";
import { formatAmount } from "../core/money.js";
import { seededRandom } from "../core/random.js";
import type { SecretRegistry } from "../core/secrets.js";
import { type Emulator, startEmulator } from "../emulator/index.js";
import { createEngine } from "../engine/factory.js";
import type { FinishedSession } from "../engine/options.js";
import type { VendEngine } from "../engine/runner.js";
import { createJournal } from "../journal/factory.js";
import type { SettleAction } from "../journal/journal.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { createPaymentDriver } from "../payment/factory.js";
import { CATALOG } from "./catalog.js";
import { SimCustomer } from "./customer.js";
import { type DemoDexStarter, type DemoDexSummary, demoDexSection, runDexReads } from "./dex.js";
import { emulatorLegacySettings, emulatorSecrets, emulatorV10Settings } from "./emulatorSettings.js";
import { createVendSource, type VendSource } from "./vendSource.js";

export interface DemoOptions {
  /** Vends to run; null = until `signal` aborts. */
  vends: number | null;
  driver: "v10" | "legacy";
  legacyMode: "reservation" | "payment";
  /** `terminal` draws the unit's screen on `out`; `none` runs headless. */
  display: "terminal" | "none";
  /** Journal file; null = a temporary directory removed afterwards. */
  journalPath: string | null;
  seed: number;
  out: NodeJS.WritableStream;
  logger: Logger;
  /** The logger's registry: the emulator-issued credentials are added to it before they are used. */
  secrets: SecretRegistry;
  signal: AbortSignal;
  /** When aborted, the unit finishes the session in progress and stops (a first Ctrl-C); `signal` stops at once. */
  finishSignal?: AbortSignal;
  /** The emulator's poll interval, ms (default 1000, the service's own minimum). */
  pollDelayMs?: number;
  clock?: Clock;
  /**
   * The board profile the unit is built from (default `sim`: the catalog machine). `sim-pulse` builds the
   * pulse controller on the simulated GPIO; the customer presses its start button (src/demo/vendSource.ts).
   */
  board?: BoardName;
  /** Selection first (default: the machine asks for a product, then the customer pays) or check-in first. */
  flow?: "selection" | "checkin";
  /**
   * The sim machine's link: `pty` runs it behind the MDB adapter line protocol on a real pseudo-terminal
   * (needs socat); `sim` calls it in process. Default `sim`.
   */
  vmcLink?: "pty" | "sim";
  /** The unit's id in its config (default `demo-1`); several demo units side by side need distinct ids. */
  unitId?: string;
  /**
   * A `fleet` section for the unit's config (`vendd demo --fleet`): the journal then writes the outbox events
   * (issue 16). The link itself is started by `onJournal` (the demo does not import the daemon).
   */
  fleet?: { url: string; keyFile: string; heartbeatSeconds?: number };
  /**
   * Called once the unit's journal is open, before the engine starts; the function it returns is awaited
   * after the engine stopped and before the journal closes (`vendd demo --fleet` runs the unit's fleet link
   * and waits for its backlog to drain there).
   */
  onJournal?: (unit: { config: VenddConfig; journal: SqliteJournal }) => Promise<() => Promise<void>>;
  /**
   * Called as each session finishes, with its number in this run (1, 2, ...) and the unit's currency
   * (`vendd demo --fleet` prints each unit's vends as they happen: the units draw no screen there).
   */
  onSessionFinished?: (s: FinishedSession, n: number, currency: string) => void;
  /**
   * `vendd demo --dex` (src/demo/dex.ts): the machine gets a DEX port on a PTY (needs socat) whose audit
   * counters follow its vends, and the unit reads it through these reads before the first vend and after
   * the last.
   */
  dex?: DemoDexStarter;
}

export interface DemoSummary {
  vends: number;
  captured: number;
  cancelled: number;
  denied: number;
  consistent: boolean;
  problems: string[];
  /** With `dex`: the two reads against the journal. */
  dex?: DemoDexSummary;
}

/** The demo's unit configuration: the same schema a real unit loads, pointed at the local emulator. */
export function demoConfig(
  emu: Emulator,
  opts: DemoOptions,
  journalPath: string,
  dexDevice: string | null = null,
): { config: VenddConfig; secrets: Secrets } {
  const config = buildConfig({
    unit: { id: opts.unitId ?? "demo-1", name: "vendd demo unit" },
    ...(dexDevice === null ? {} : { dex: demoDexSection(dexDevice) }),
    ...(opts.fleet === undefined ? {} : { fleet: opts.fleet }),
    ...(opts.board === undefined ? {} : { board: opts.board }),
    journal: { path: journalPath },
    display: { kind: opts.display },
    engine: {
      flow: opts.flow ?? "selection",
      sessionMax: "50.00",
      paymentTimeoutMs: 60_000,
      vendTimeoutMs: 30_000,
    },
    payment:
      opts.driver === "v10"
        ? { driver: "v10", v10: emulatorV10Settings(emu.info) }
        : {
            driver: "legacy",
            legacy: {
              ...emulatorLegacySettings(emu.info),
              posId: "demo-unit-1",
              posUnitId: "100000000000001",
              mode: opts.legacyMode,
            },
          },
  });
  const secrets = emulatorSecrets(emu.info, opts.driver);
  return { config, secrets };
}

/** What one running demo unit is made of; `close()` releases whatever was opened, in reverse order. */
interface DemoParts {
  config: VenddConfig;
  journal: SqliteJournal;
  engine: VendEngine;
  source: VendSource;
  customer: SimCustomer;
  finished: FinishedSession[];
  /** Awaited after the engine stopped, before the journal closes (`onJournal`'s function), at most once. */
  detach: (() => Promise<void>) | null;
  close(): Promise<void>;
}

/** Opens the journal, the payment driver, the simulated machine, the display and the engine, and starts it. */
async function startParts(
  opts: DemoOptions,
  emu: Emulator,
  paths: { journal: string; dex: string | null },
  clock: Clock,
): Promise<DemoParts> {
  const opened: (() => Promise<void> | void)[] = [];
  const parts: Partial<DemoParts> & { finished: FinishedSession[]; detach: DemoParts["detach"] } = {
    finished: [],
    detach: null,
  };
  const close = async () => {
    for (const c of opened.splice(0).reverse()) await c();
  };
  try {
    const { config, secrets } = demoConfig(emu, opts, paths.journal, paths.dex);
    for (const value of secretValues(secrets)) opts.secrets.addSecret(value);
    const j = createJournal(journalOptions(config), { clock });
    opened.push(() => j.close());
    if (opts.onJournal !== undefined) parts.detach = await opts.onJournal({ config, journal: j });
    opened.push(async () => {
      const d = parts.detach;
      parts.detach = null;
      await d?.();
    });
    const payment = await createPaymentDriver(paymentOptions(config, secrets), {
      clock,
      logger: opts.logger,
      ownsOrder: (orderId) => j.ownsLiveOrder(orderId),
    });
    opened.push(() => payment.close());
    const users = emu.info.users.filter(
      (u) => !u.features.some((f) => f === "walksAway" || f === "slowToAccept" || f === "insufficientFunds"),
    );
    const customer = new SimCustomer({
      app: emu.userSimulation,
      clock,
      logger: opts.logger,
      phone: users[0]?.phone ?? "+4520031801",
      scanMs: 400,
    });
    const pty = opts.vmcLink === "pty" && (opts.flow ?? "selection") === "selection";
    const source = await createVendSource(config, {
      clock,
      logger: opts.logger,
      pty,
      ...(paths.dex === null ? {} : { dexLinkPath: paths.dex }),
    });
    opened.push(() => source.close());
    const inner = await createDisplay(displayOptions(config), { out: opts.out, logger: opts.logger });
    const finished = parts.finished;
    const display = withObserver(inner, (screen, redrawn) => {
      customer.see(screen);
      if (redrawn && opts.display === "terminal") opts.out.write(footer(finished, config.currency));
    });
    opened.push(() => display.close());
    const engine = createEngine(engineOptions(config), {
      payment,
      vmc: source.vmc,
      display,
      journal: j,
      clock,
      logger: opts.logger.child({ component: "engine" }),
    });
    opened.push(() => engine.stop());
    engine.onSessionFinished((s) => {
      finished.push(s);
      opts.onSessionFinished?.(s, finished.length, config.currency);
    });
    await engine.start();
    // the same object the closers read `detach` from: runDemo clears it there once it ran
    return Object.assign(parts, { config, journal: j, engine, source, customer, close });
  } catch (err) {
    await close();
    throw err;
  }
}

/** Customers ask for vends until `vends` sessions finished, or the demo is told to stop. */
async function vendLoop(opts: DemoOptions, p: DemoParts, clock: Clock): Promise<void> {
  const { config, engine: e, source, finished } = p;
  const vmc = source.vmc;
  const random = seededRandom(opts.seed);
  let wake: (() => void) | null = null;
  e.onSessionFinished(() => wake?.());
  const onAbort = () => wake?.();
  opts.signal.addEventListener("abort", onAbort);
  try {
    while (
      !opts.signal.aborted &&
      opts.finishSignal?.aborted !== true &&
      (opts.vends === null || finished.length < opts.vends)
    ) {
      if (config.engine.flow === "checkin" && vmc instanceof SimVmc) {
        await checkinSession({ vmc, customer: p.customer, clock, random, signal: opts.signal, finished });
        if (!opts.signal.aborted) await clock.sleep(opts.display === "terminal" ? 1500 : 50);
        continue;
      }
      const before = finished.length;
      const done = new Promise<void>((resolve) => {
        wake = resolve;
      });
      if (!source.request(random)) {
        await clock.sleep(100);
        continue;
      }
      await done;
      wake = null;
      if (finished.length === before) break;
      await e.whenIdle();
      if (!opts.signal.aborted) await clock.sleep(opts.display === "terminal" ? 1500 : 50);
    }
  } finally {
    opts.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Runs a whole simulated unit: the payment-service emulator on a loopback port, the unit (engine, journal,
 * the configured payment driver over HTTP), a simulated vending machine requesting vends and simulated
 * customers paying with the app. Returns the summary once `vends` sessions finished (or on abort).
 */
export async function runDemo(opts: DemoOptions): Promise<DemoSummary> {
  const clock = opts.clock ?? systemClock;
  const tempDir = opts.journalPath === null ? mkdtempSync(join(tmpdir(), "vendd-demo-")) : null;
  const journalPath = opts.journalPath ?? join(tempDir ?? ".", "journal.db");
  // The machine's DEX PTY lives in a directory of its own (a kept journal's folder is the user's).
  const dexDir = opts.dex === undefined ? null : mkdtempSync(join(tmpdir(), "vendd-demo-dex-"));
  const emu = await startEmulator({ port: 0, host: "127.0.0.1", pollDelayMs: opts.pollDelayMs ?? 1000 });
  let parts: DemoParts | null = null;
  try {
    const dexPath = dexDir === null ? null : join(dexDir, "dex");
    parts = await startParts(opts, emu, { journal: journalPath, dex: dexPath }, clock);
    const p = parts;
    const dex =
      opts.dex === undefined
        ? null
        : await runDexReads(opts.dex, p, opts.signal, () => vendLoop(opts, p, clock));
    if (dex === null) await vendLoop(opts, parts, clock);
    await parts.engine.stop();
    const summary: DemoSummary = {
      ...summarize(parts.journal, emu, parts.config.engine.unknownOutcome),
      ...(dex === null ? {} : { dex }),
    };
    const d = parts.detach;
    parts.detach = null;
    await d?.();
    return summary;
  } finally {
    await parts?.close();
    await emu.close();
    if (tempDir !== null) rmSync(tempDir, { recursive: true, force: true });
    if (dexDir !== null) rmSync(dexDir, { recursive: true, force: true });
  }
}

/**
 * One check-in-first customer: arrives and checks in on the idle QR code, accepts the reservation in the
 * app, then chooses one to three products within the funds on the machine and ends the session.
 */
async function checkinSession(d: {
  vmc: SimVmc;
  customer: SimCustomer;
  clock: Clock;
  random: () => number;
  signal: AbortSignal;
  finished: readonly FinishedSession[];
}): Promise<void> {
  const before = d.finished.length;
  const until = async (ok: () => boolean, ms: number) => {
    for (let waited = 0; !ok() && waited < ms && !d.signal.aborted; waited += 100) await d.clock.sleep(100);
    return ok();
  };
  d.customer.arrive();
  if (!(await until(() => d.vmc.sessionFunds !== null || d.finished.length > before, 90_000))) return;
  let left = d.vmc.sessionFunds ?? 0;
  const wanted = 1 + Math.floor(d.random() * 3);
  for (let i = 0; i < wanted && d.vmc.sessionFunds !== null; i++) {
    const affordable = CATALOG.filter((p) => p.price <= left);
    const product = affordable[Math.floor(d.random() * affordable.length)];
    if (product === undefined || !d.vmc.requestVend(product.item, product.price)) break;
    await until(() => d.vmc.status !== "requested" && d.vmc.status !== "vending", 60_000);
    if (d.vmc.vends.at(-1)?.result === "delivered") left -= product.price;
  }
  d.vmc.finishSession();
  await until(() => d.finished.length > before, 60_000);
}

/**
 * The run's summary from the journal, checked by the consistency checker against the emulator's ledger
 * under the unit's `unknownOutcome` policy. A check-in session counts as a vend only when funds were
 * reserved: an idle reservation nobody took (released at stop) sold nothing.
 */
function summarize(journal: SqliteJournal, emu: Emulator, policy: SettleAction): DemoSummary {
  const all = journal.sessions();
  const ledger = emu.ledger();
  const vends = all.flatMap((s) => journal.vends(s.id).map((v) => ({ ...v, sessionId: s.id })));
  const r = checkConsistency({
    journal: { sessions: all, vends, intents: [], integrity: "ok" },
    ledger,
    policy,
  });
  const held = new Set(ledger.filter((e) => e.kind === "reserved" || e.kind === "paid").map((e) => e.id));
  const sessions = all.filter((s) => s.flow !== "checkin" || (s.paymentId !== null && held.has(s.paymentId)));
  const count = (result: string) => sessions.filter((s) => s.result === result).length;
  return {
    vends: sessions.length,
    captured: count("captured"),
    cancelled: count("cancelled"),
    denied: count("denied"),
    consistent: r.consistent,
    problems: r.problems,
  };
}

/** Lets the demo see each screen the unit draws (the customer "looks" at it). */
function withObserver(inner: CheckinDisplay, observe: (s: Screen, redrawn: boolean) => void): CheckinDisplay {
  let last: Screen | undefined;
  return {
    kind: inner.kind,
    show(screen) {
      const redrawn = !sameScreen(last, screen);
      last = screen;
      inner.show(screen);
      observe(screen, redrawn);
    },
    current: () => inner.current(),
    close: () => inner.close(),
  };
}

function footer(finished: readonly FinishedSession[], currency: string): string {
  const recent = finished.slice(-5).map((s, i, all) => {
    const n = finished.length - all.length + i + 1;
    return `  #${n} ${formatAmount(s.price)} ${currency}: ${s.result}`;
  });
  const total = finished.filter((s) => s.result === "captured").reduce((a, s) => a + s.price, 0);
  return [
    "",
    `vends: ${finished.length}   captured: ${formatAmount(total)} ${currency}   (Ctrl-C to stop)`,
    ...recent,
    "",
  ].join("\n");
}
