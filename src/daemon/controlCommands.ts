/**
 * The commands the control socket serves (the technician console's, issue 13), on top of the unit's
 * parts. Each validates its own arguments (`badArgs`) and answers plain JSON the console renders.
 */
import type { VendController } from "../../drivers/vmc/controller.js";
import type { VenddConfig } from "../config/load.js";
import { toConfigInput } from "../config/load.js";
import type { ControlStatus, LinkState } from "../core/controlStatus.js";
import type { LogRing } from "../core/logRing.js";
import { formatAmount, parseAmount } from "../core/money.js";
import { printable } from "../core/printable.js";
import type { FinishedSession } from "../engine/options.js";
import type { VendEngine } from "../engine/runner.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { readUpdateOutcome, type UpdateStatus } from "../update/state.js";
import {
  type ConfigEdit,
  describeEdit,
  diffEdits,
  dropForApplier,
  editedText,
  parseEdit,
  validateText,
} from "./configApply.js";
import { CommandError, type CommandSpec, type ControlSession } from "./control.js";
import type { FleetStatus } from "./fleetLink.js";
import type { UnitStatus } from "./status.js";

/** What the commands need of the running unit. */
export interface ConsoleUnit {
  config: VenddConfig;
  /** The config file the daemon runs from (null: built in code, `config apply` unavailable). */
  configFile: string | null;
  env: NodeJS.ProcessEnv;
  journal: SqliteJournal;
  vmc: VendController;
  now(): number;
  status(): UnitStatus;
  engine(): VendEngine | null;
  beacon(): string;
  /** Out of service by the console (`reason`) or back (null). */
  setService(reason: string | null): Promise<void>;
  serviceReason(): string | null;
  logs: LogRing | null;
  restart(why: string): void;
  /** The fleet link's state; null (or absent) without a fleet link. */
  fleet?: () => FleetStatus | null;
}

const STAGED = "config.staged";
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function str(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new CommandError("badArgs", `${key} must be text`);
  return v;
}

function localDay(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

function staged(session: ControlSession): ConfigEdit[] {
  const s = session.data.get(STAGED);
  return Array.isArray(s) ? (s as ConfigEdit[]) : [];
}

export function controlStatus(u: ConsoleUnit): ControlStatus {
  const s = u.status();
  const codes = new Set(s.reasons.map((r) => r.code));
  const e = u.engine();
  const payment: LinkState =
    codes.has("paymentUnreachable") || codes.has("paymentRefused") || codes.has("starting")
      ? "down"
      : e !== null
        ? "up"
        : "unknown";
  const journal: LinkState = codes.has("journal") ? "down" : "up";
  const vmc: LinkState = codes.has("vmcUnavailable")
    ? "down"
    : e === null
      ? "unknown"
      : codes.has("failure")
        ? "down"
        : "up";
  const store = u.journal.console();
  const audit = store.verifyAudit();
  const update = readUpdateOutcome(u.config.updates.stateDir);
  const recent = u.journal.sessions({ limit: 5 }).map((x) => ({
    at: x.openedAt,
    orderId: x.orderId,
    item: x.item,
    price: formatAmount(x.price),
    result: x.closedAt === null ? "open" : (x.result ?? "closed"),
  }));
  return {
    unitId: u.config.unit.id,
    inService: s.inService,
    reasons: s.reasons.map((r) => ({ code: r.code, detail: r.detail, retryAt: r.retryAt })),
    links: { vmc, payment, journal },
    unresolved: u.journal.unresolved().length,
    configVersion: update.highWater,
    update: describeUpdate(update),
    serviceMode: u.serviceReason(),
    engine: e === null ? "not started" : e.current.tag,
    beacon: u.beacon(),
    beaconId: e?.pos?.beaconId ?? null,
    lastVends: recent,
    audit: { ok: audit.ok, detail: audit.detail },
    currency: u.config.currency,
    ...fleetStatus(u),
  };
}

function fleetStatus(u: ConsoleUnit): { fleet?: FleetStatus } {
  const f = u.fleet?.() ?? null;
  return f === null ? {} : { fleet: f };
}

export function consoleCommands(u: ConsoleUnit): Map<string, CommandSpec> {
  const commands = new Map<string, CommandSpec>();

  commands.set("help", {
    public: true,
    unaudited: true,
    run: () => ({ commands: [...commands.keys(), "login"].sort() }),
  });

  commands.set("logout", {
    run: (_a, session) => {
      session.who = null;
      return { loggedOut: true };
    },
  });

  // Public: the update applier's health gate asks for it without a login (the socket is 0600).
  commands.set("status", { public: true, run: () => controlStatus(u) });

  commands.set("sales", {
    audit: (a) => `sales ${str(a, "from") ?? ""}..${str(a, "to") ?? ""}`,
    run: (a) => {
      const today = localDay(u.now());
      const from = str(a, "from") ?? today;
      const to = str(a, "to") ?? from;
      if (!DAY.test(from) || !DAY.test(to) || Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to)))
        throw new CommandError("badArgs", "dates are YYYY-MM-DD");
      if (from > to) throw new CommandError("badArgs", "--from is after --to");
      const lines = u.journal.console().sales(from, to);
      const days = new Map<string, { count: number; total: number }>();
      for (const l of lines) {
        const d = days.get(l.day) ?? { count: 0, total: 0 };
        d.count += l.count;
        d.total += l.total;
        days.set(l.day, d);
      }
      return {
        from,
        to,
        currency: u.config.currency,
        items: lines.map((l) => ({ day: l.day, item: l.item, count: l.count, total: formatAmount(l.total) })),
        days: [...days].map(([day, d]) => ({ day, count: d.count, total: formatAmount(d.total) })),
        count: lines.reduce((n, l) => n + l.count, 0),
        total: formatAmount(lines.reduce((n, l) => n + l.total, 0)),
      };
    },
  });

  commands.set("journal", {
    audit: (a) =>
      `journal ${str(a, "view") ?? "recent"}${a.session === undefined ? "" : ` ${String(a.session)}`}`,
    run: (a) => {
      const view = str(a, "view") ?? "recent";
      const line = (x: ReturnType<SqliteJournal["sessions"]>[number]) => ({
        at: x.openedAt,
        orderId: x.orderId,
        sessionId: x.id,
        item: x.item,
        price: formatAmount(x.price),
        result: x.closedAt === null ? "open" : (x.result ?? "closed"),
        reason: x.reason ?? "",
      });
      if (view === "recent") return { view, sessions: u.journal.sessions({ limit: 10 }).map(line) };
      if (view === "unresolved") return { view, sessions: u.journal.unresolved().slice(0, 50).map(line) };
      if (view === "session") {
        const id = str(a, "session");
        if (id === undefined || id.length > 64)
          throw new CommandError("badArgs", "journal SESSION needs an id");
        const d = u.journal.console().session(id);
        if (d === null) throw new CommandError("refused", `no session ${printable(id, 64)} in the journal`);
        return {
          view,
          session: line(d.session),
          intents: d.intents.map((i) => ({
            op: i.op,
            amount: formatAmount(i.amount),
            state: i.state,
            at: i.createdAt,
          })),
          events: d.events.map((ev) => ({ at: ev.at, type: ev.type, data: printable(ev.data ?? "", 120) })),
        };
      }
      throw new CommandError("badArgs", "journal recent|unresolved|SESSION");
    },
  });

  commands.set("errors", {
    run: () => ({
      reasons: u.status().reasons.map((r) => ({ code: r.code, detail: r.detail })),
      lines: (u.logs?.recentProblems(20) ?? []).map((l) => l.text),
    }),
  });

  commands.set("logs", {
    audit: (a) => (a.follow === true ? "logs --follow" : a.follow === false ? "logs (stop)" : "logs"),
    run: (a, session) => {
      const stop = session.data.get("logs.stop");
      if (typeof stop === "function") (stop as () => void)();
      session.data.delete("logs.stop");
      if (a.follow === false) return { following: false, lines: [] };
      const lines = (u.logs?.recent(40) ?? []).map((l) => l.text);
      if (a.follow === true && u.logs !== null) {
        const off = u.logs.follow((l) => session.push("log", l.text));
        session.data.set("logs.stop", off);
        session.onClose(off);
      }
      return { following: a.follow === true, lines };
    },
  });

  commands.set("service", {
    audit: (a) => `service ${str(a, "mode") ?? "?"}${a.reason === undefined ? "" : ` ${String(a.reason)}`}`,
    run: async (a) => {
      const mode = str(a, "mode");
      if (mode === "out") {
        const reason = (str(a, "reason") ?? "Service")
          .replace(/[^\x20-\x7e]/g, "")
          .trim()
          .slice(0, 40);
        await u.setService(reason === "" ? "Service" : reason);
        return { inService: false, reason: reason === "" ? "Service" : reason };
      }
      if (mode === "in") {
        await u.setService(null);
        return { inService: u.status().inService };
      }
      throw new CommandError("badArgs", "service in|out [REASON]");
    },
  });

  commands.set("restart", {
    run: () => {
      setImmediate(() => u.restart("restart from the console"));
      return { restarting: true };
    },
  });

  commands.set("config", {
    audit: (a) => {
      const action = str(a, "action") ?? "?";
      if (action !== "set") return `config ${action}`;
      const e = parseEdit(a.key, a.value);
      return typeof e === "string"
        ? "config set (invalid)"
        : `config set ${describeEdit({ key: e.key, value: a.value })}`;
    },
    run: (a, session) => configCommand(u, a, session),
  });

  commands.set("test-vend", {
    audit: (a) => `test-vend ${str(a, "amount") ?? ""}`.trim(),
    run: (a, session) => testVend(u, a, session),
  });

  return commands;
}

function configCommand(u: ConsoleUnit, a: Record<string, unknown>, session: ControlSession): unknown {
  const action = str(a, "action");
  const file = u.configFile;
  switch (action) {
    case "show": {
      const flat: { key: string; value: string }[] = [];
      flatten(toConfigInput(u.config), "", flat);
      return { version: readUpdateOutcome(u.config.updates.stateDir).highWater, entries: flat };
    }
    case "discard": {
      const n = staged(session).length;
      session.data.delete(STAGED);
      return { discarded: n };
    }
    case "diff":
      if (file === null) return { changes: [] };
      return { changes: diffEdits(file, staged(session)) };
    case "set": {
      if (file === null) throw new CommandError("refused", "this daemon runs without a config file");
      const edit = parseEdit(a.key, a.value);
      if (typeof edit === "string") throw new CommandError("badArgs", edit);
      if (edit.key === "updates" || edit.key.startsWith("updates."))
        throw new CommandError("refused", "only a signed bundle changes the updates section");
      let next = [...staged(session), edit];
      let issues = validateText(editedText(file, next), u.env);
      if (issues.length > 0 && typeof a.value === "string" && edit.value !== a.value) {
        // `2.50` reads as a number in YAML; amounts are text: try the value as typed.
        const asText = [...staged(session), { key: edit.key, value: a.value }];
        if (validateText(editedText(file, asText), u.env).length === 0) {
          next = asText;
          issues = [];
        }
      }
      if (issues.length > 0)
        throw new CommandError(
          "refused",
          `not staged, the config would be invalid:\n${issues.map((i) => `${i.path}: ${i.message}`).join("\n")}`,
          { errors: issues.map((i) => ({ path: i.path, message: i.message })) },
        );
      session.data.set(STAGED, next);
      return { staged: next.map(describeEdit) };
    }
    case "apply": {
      if (file === null) throw new CommandError("refused", "this daemon runs without a config file");
      const edits = staged(session);
      if (edits.length === 0) throw new CommandError("refused", "nothing staged (config set KEY VALUE)");
      const text = editedText(file, edits);
      const issues = validateText(text, u.env);
      if (issues.length > 0)
        throw new CommandError(
          "refused",
          `not applied, the config is invalid:\n${issues.map((i) => `${i.path}: ${i.message}`).join("\n")}`,
          { errors: issues },
        );
      if (edits.some((e) => e.key === "updates" || e.key.startsWith("updates.")))
        throw new CommandError("refused", "only a signed bundle changes the updates section");
      const queued = dropForApplier(u.config.updates.inbox, text, u.now());
      session.data.delete(STAGED);
      return { queued, changes: edits.map(describeEdit) };
    }
    default:
      throw new CommandError("badArgs", "config show|diff|set KEY VALUE|apply|discard");
  }
}

function flatten(value: unknown, prefix: string, out: { key: string; value: string }[]): void {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix === "" ? k : `${prefix}.${k}`, out);
    return;
  }
  out.push({
    key: prefix,
    value:
      prefix === "console.pinHash" && value !== null
        ? "(set)"
        : printable(JSON.stringify(value) ?? "null", 200),
  });
}

interface SimSelection {
  requestVend(item: number, price: number): boolean;
}

function canSelect(vmc: VendController): vmc is VendController & SimSelection {
  return "requestVend" in vmc && typeof vmc.requestVend === "function";
}

/**
 * A real vend of the test amount through the whole path: the VMC requests it (the simulated machine's
 * selection), the unit shows the QR and waits for the payment, approves the vend, settles and records it.
 * On a real machine the selection is the technician's, at the machine: this waits for it.
 */
async function testVend(
  u: ConsoleUnit,
  a: Record<string, unknown>,
  session: ControlSession,
): Promise<unknown> {
  const e = u.engine();
  if (e === null || !u.status().inService || e.current.tag !== "idle")
    throw new CommandError("busy", "the unit must be in service and idle for a test vend");
  if (u.config.engine.flow !== "selection")
    throw new CommandError("refused", "test-vend runs in the selection flow (engine.flow: selection)");
  const text = str(a, "amount") ?? u.config.console.testVendAmount;
  let amount: number;
  try {
    amount = parseAmount(text, 2);
  } catch {
    throw new CommandError("badArgs", `not an amount: ${printable(text, 20)}`);
  }
  if (amount <= 0 || amount > u.config.engine.maxPriceMinor)
    throw new CommandError("badArgs", `the amount must be above 0 and at most ${u.config.engine.maxPrice}`);
  const item = u.config.console.testVendItem;
  const timeoutMs = u.config.engine.paymentTimeoutMs + u.config.engine.vendTimeoutMs + 30_000;
  const finished = new Promise<FinishedSession | null>((resolve) => {
    const off = e.onSessionFinished((s) => {
      off();
      clearTimeout(timer);
      resolve(s);
    });
    const timer = setTimeout(() => {
      off();
      resolve(null);
    }, timeoutMs);
  });
  if (canSelect(u.vmc)) {
    if (!u.vmc.requestVend(item, amount))
      throw new CommandError("busy", "the simulated machine did not take the selection");
    session.push(
      "progress",
      `test vend of ${formatAmount(amount)}: QR shown on the unit, waiting for payment`,
    );
  } else {
    session.push(
      "progress",
      `select item ${item} at ${formatAmount(amount)} in the machine's test vend menu; waiting for it`,
    );
  }
  const s = await finished;
  if (s === null) throw new CommandError("failed", "no vend finished in time");
  return { orderId: s.orderId, result: s.result, amount: formatAmount(s.price), reason: s.reason };
}

/** One line on the last update (a bundle or a console change) and one in progress. */
export function describeUpdate(s: UpdateStatus): string {
  if (s.problem !== null) return `update state unreadable: ${printable(s.problem, 80)}`;
  if (s.pending !== null) return `applying version ${s.pending.version} (${s.pending.phase})`;
  const o = s.outcome;
  if (o === null) return "no update applied";
  const what = `${o.kind ?? "bundle"} ${o.bundleId ?? ""} from ${o.source}`;
  return `${o.result.replace("_", " ")}: ${printable(what, 80)}${o.reason === null ? "" : ` (${printable(o.reason, 80)})`}`;
}
