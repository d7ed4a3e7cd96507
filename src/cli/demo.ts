import { parseArgs } from "node:util";
import { systemClock } from "../core/clock.js";
import { createLogger } from "../core/log.js";
import { printable } from "../core/printable.js";
import { SecretRegistry } from "../core/secrets.js";
import { runDemo } from "../demo/unit.js";
import { renderCommandUsage } from "./commandTable.js";
import { LOG_LEVELS, parseListen } from "./fleetOptions.js";
import { handleInterrupts } from "./interrupts.js";
import { DEMO_OPTIONS, SIMULATION_COMMANDS } from "./simCommands.js";

const HELP = `${renderCommandUsage(SIMULATION_COMMANDS.filter((c) => c.command === "demo"))}
Runs a simulated unit against the local payment-service emulator: a simulated vending machine requests
vends, simulated customers check in with the app and pay, and the unit shows its screen (QR code, price,
state) until Ctrl-C. With --vends N it stops after N vends; with --json it prints one summary line:
{"vends":N,"captured":C,"cancelled":X,"denied":D,"consistent":true|false}
and exits non-zero when the journal and the emulator's record of money movements disagree.
--vmc pty runs the simulated machine behind the MDB cashless adapter line protocol on a real pseudo-terminal,
driven by the unit's serial driver (needs socat); --vmc sim calls it in process; auto (default) picks pty
when socat is installed.
--chaos SEED runs the chaos self-check: the unit daemon as a child process, killed at seeded random
moments with the emulator's faults on and restarted each time; the same summary line, with "consistent"
computed from the journal and the emulator's ledger after the last recovery (needs socat).
--flow checkin runs the check-in-first flow: each customer checks in on the idle QR code, the unit reserves
the session maximum, the customer buys one to three products, and the unit captures what was vended.
--board sim-pulse runs a pulse machine (boards/sim-pulse.json) on simulated GPIO: the customer presses its
start button and the unit pays for the board's one price, then sends the pulses.
--fleet runs a fleet server (vendd fleet serve, SQLite in a temporary directory or --fleet-db FILE, on
--fleet-listen, default 127.0.0.1:0 = any free port) with the dashboard, and three simulated units (demo-1..3,
each with its own key, enrolled and approved) that vend and report every session through their outbox. It
prints the dashboard URL with user "manager" and a random password (or writes the password to
--fleet-password-file). With --vends N it stops once each unit did N vends and the fleet has every event:
{"units":3,"vends":V,"captured":C,"fleetEvents":E,"fleetSalesTotal":"…","journalsTotal":"…","consistent":…}
and exits non-zero when the fleet's sales differ from the units' journals.
--dex gives each unit's simulated machine a DEX port on a pseudo-terminal (needs socat; the sim board, the
selection flow) whose EVA-DTS audit counters follow the vends it delivers; the unit reads it through the real
DEX reader before its first vend and after its last, journals both reads (with --fleet they reach the fleet
through the outbox) and the summary gets "dex": the machine's cashless change against the unit's captured
sales; with --fleet also the fleet's three-way report of the demo's days (per class, "clean"; the payment
service's column is empty: the demo runs no settlement reconciliation). Exits non-zero when they differ.
`;

/** Boards the demo can simulate entirely (boards/*.json with simulated devices). */
const DEMO_BOARDS = ["sim", "sim-pulse"] as const;

/** `vendd demo`: what `npm start` runs. */
export async function demoCommand(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (err) {
    process.stderr.write(`vendd demo: ${(err as Error).message}\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const vends = values.vends === undefined ? null : Number(values.vends);
  if (vends !== null && (!Number.isSafeInteger(vends) || vends < 1))
    return usage("--vends must be a positive integer");
  const driver = values.driver ?? "v10";
  if (driver !== "v10" && driver !== "legacy") return usage("--driver must be v10 or legacy");
  const legacyMode = values["legacy-mode"] ?? "reservation";
  if (legacyMode !== "reservation" && legacyMode !== "payment") {
    return usage("--legacy-mode must be reservation or payment");
  }
  const level = values["log-level"];
  if (level !== undefined && !(LOG_LEVELS as readonly string[]).includes(level))
    return usage(`--log-level ${printable(level, 64)}: not a log level; one of ${LOG_LEVELS.join(", ")}`);
  const board = DEMO_BOARDS.find((b) => b === (values.board ?? "sim"));
  if (board === undefined) return usage(`--board must be one of: ${DEMO_BOARDS.join(", ")}`);
  if (values.dex === true) {
    const refused = dexRefused(values);
    if (refused !== null) return usage(refused);
    const { socatAvailable } = await import("../../drivers/vmc/simulator/pty.js");
    if (!socatAvailable())
      return usage("--dex needs socat (Debian package socat) for the machine's DEX port");
  }
  if (values.fleet === true) return fleet(values, vends);
  const flow = values.flow ?? "selection";
  if (flow !== "selection" && flow !== "checkin") return usage("--flow must be selection or checkin");
  if (values.chaos !== undefined) {
    const chaosSeed = Number(values.chaos);
    if (!Number.isSafeInteger(chaosSeed)) return usage("--chaos takes an integer seed");
    return chaos(chaosSeed, vends ?? 20, driver, flow, values.json === true);
  }
  // A first Ctrl-C lets the vend in progress finish (the summary then holds only settled sessions); a
  // second one stops at once. In place before anything slow is loaded or started.
  // A Ctrl-C while the command loaded (main.ts held it) counts as the first one.
  const { finish, ac, stop } = interrupts();
  const release = handleInterrupts(stop);
  try {
    return await unitDemo(values, vends, { driver, legacyMode, board, flow }, { finish, ac });
  } finally {
    release();
  }
}

async function unitDemo(
  values: ReturnType<typeof parse>["values"],
  vends: number | null,
  choice: {
    driver: "v10" | "legacy";
    legacyMode: "reservation" | "payment";
    board: (typeof DEMO_BOARDS)[number];
    flow: "selection" | "checkin";
  },
  stops: { finish: AbortController; ac: AbortController },
): Promise<number> {
  const { driver, legacyMode, board, flow } = choice;
  const { finish, ac } = stops;
  const vmcLink = values.vmc ?? "auto";
  if (vmcLink !== "auto" && vmcLink !== "pty" && vmcLink !== "sim")
    return usage("--vmc must be auto, pty or sim");
  const { socatAvailable } = await import("../../drivers/vmc/simulator/pty.js");
  const hasSocat = socatAvailable();
  if (vmcLink === "pty" && !hasSocat) return usage("--vmc pty needs socat (Debian package socat)");
  if (vmcLink === "auto" && !hasSocat && values.json !== true) {
    process.stderr.write("note: socat not found; the simulated machine runs in process (--vmc sim)\n");
  }
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) return usage("--seed must be an integer");
  const json = values.json === true;
  // The emulator issues the demo's credentials at start; runDemo registers them here before any use.
  const secrets = new SecretRegistry();
  const logger = createLogger({ level: values["log-level"] ?? (json ? "error" : "warn"), secrets });

  const dexStarter =
    values.dex === true ? (await import("./demoDex.js")).demoDexReads(systemClock, logger) : undefined;
  const summary = await runDemo({
    ...(dexStarter === undefined ? {} : { dex: dexStarter }),
    vends,
    driver,
    legacyMode,
    ...(values.board === undefined ? {} : { board }),
    flow,
    vmcLink: vmcLink === "sim" || !hasSocat ? "sim" : "pty",
    display: json ? "none" : "terminal",
    journalPath: values.journal ?? null,
    seed,
    out: process.stdout,
    logger,
    secrets,
    signal: ac.signal,
    finishSignal: finish.signal,
  });
  const { problems, ...line } = summary;
  if (json) process.stdout.write(`${JSON.stringify(line)}\n`);
  else process.stdout.write(`\n${JSON.stringify(line)}\n`);
  for (const p of problems) process.stderr.write(`inconsistent: ${p}\n`);
  const dex = summary.dex;
  if (dex !== undefined) {
    for (const e of dex.errors) process.stderr.write(`inconsistent: DEX read failed: ${e}\n`);
    if (!dex.agree)
      process.stderr.write("inconsistent: the machine's DEX counters differ from the captured sales\n");
  }
  return summary.consistent && (dex === undefined || (dex.agree && dex.errors.length === 0)) ? 0 : 1;
}

/** Why `--dex` cannot run with these options (null: it can); it needs socat for the DEX port's PTY. */
function dexRefused(values: ReturnType<typeof parse>["values"]): string | null {
  if (values.chaos !== undefined) return "--dex is not used with --chaos";
  if ((values.board ?? "sim") !== "sim")
    return "--dex needs the sim board (the pulse machine has no DEX port)";
  if ((values.flow ?? "selection") !== "selection") return "--dex needs the selection flow";
  return null;
}

/**
 * The chaos self-check: the unit daemon runs as a child process against the emulator and a simulated
 * machine on a PTY, is killed at seeded random moments with the emulator's faults on, and is restarted;
 * the summary's `consistent` compares the journal with the emulator's ledger after the last recovery.
 */
async function chaos(
  seed: number,
  vends: number,
  driver: "v10" | "legacy",
  flow: "selection" | "checkin",
  json: boolean,
): Promise<number> {
  const { socatAvailable } = await import("../../drivers/vmc/simulator/pty.js");
  if (!socatAvailable())
    return usage("--chaos needs socat (Debian package socat) for the simulated machine's PTY");
  const { runChaos } = await import("../chaos/index.js");
  const ac = new AbortController();
  // SIGINT stops at once (as before); SIGTERM, held by main.ts, too.
  const release = handleInterrupts(() => ac.abort(new Error("interrupted")));
  try {
    const r = await runChaos({
      seed,
      vends,
      driver,
      flow,
      signal: ac.signal,
      ...(json ? {} : { out: process.stderr }),
    });
    const line = {
      vends: r.vends,
      captured: r.captured,
      cancelled: r.cancelled,
      denied: r.denied,
      consistent: r.consistent,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    if (!json) process.stderr.write(`daemon killed ${r.kills} times\n`);
    for (const p of r.problems) process.stderr.write(`inconsistent: ${p}\n`);
    return r.consistent ? 0 : 1;
  } finally {
    release();
  }
}

/** `vendd demo --fleet`: the fleet server and three units (demoFleet.ts). */
async function fleet(values: ReturnType<typeof parse>["values"], vends: number | null): Promise<number> {
  for (const only of ["driver", "legacy-mode", "board", "flow", "vmc", "chaos", "journal"] as const)
    if (values[only] !== undefined) return usage(`--${only} is not used with --fleet`);
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) return usage("--seed must be an integer");
  let listen: { host: string; port: number };
  try {
    listen = parseListen(values["fleet-listen"] ?? "127.0.0.1:0");
  } catch (err) {
    return usage(`--fleet-listen: ${(err as Error).message}`);
  }
  const json = values.json === true;
  const { runDemoFleet } = await import("./demoFleet.js");
  // A first Ctrl-C lets each unit finish its vend and deliver its events; a second one stops at once.
  const { finish, ac, stop } = interrupts();
  const release = handleInterrupts(stop);
  try {
    const summary = await runDemoFleet({
      vends,
      json,
      seed,
      fleetDb: values["fleet-db"] ?? null,
      passwordFile: values["fleet-password-file"] ?? null,
      host: listen.host,
      port: listen.port,
      logLevel: values["log-level"] ?? (json ? "error" : "warn"),
      signal: ac.signal,
      finish: finish.signal,
      out: process.stdout,
      err: process.stderr,
      dex: values.dex === true,
    });
    process.stdout.write(`${json ? "" : "\n"}${JSON.stringify(summary)}\n`);
    return summary.consistent ? 0 : 1;
  } finally {
    release();
  }
}

/**
 * A signal within this long of the first is the same Ctrl-C: in a terminal the key sends SIGINT to the
 * whole process group, so under `npm start` the demo gets it from the terminal and again from npm, which
 * forwards it to its child.
 */
export const SAME_INTERRUPT_MS = 1_000;

/**
 * The demo's two stops: the first SIGINT or SIGTERM aborts `finish` (the vend in progress ends, then the
 * summary), a later one (after SAME_INTERRUPT_MS) aborts `ac` (at once).
 */
function interrupts(now: () => number = Date.now) {
  const finish = new AbortController();
  const ac = new AbortController();
  let first = 0;
  const stop = (): void => {
    if (!finish.signal.aborted) {
      first = now();
      finish.abort(new Error("interrupted"));
      process.stderr.write("\nstopping: finishing the vend in progress (Ctrl-C again to stop at once)\n");
    } else if (now() - first >= SAME_INTERRUPT_MS) ac.abort(new Error("interrupted"));
  };
  return { finish, ac, stop };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: DEMO_OPTIONS,
  });
}

function usage(message: string): number {
  process.stderr.write(`vendd demo: ${message}\n${HELP}`);
  return 2;
}
