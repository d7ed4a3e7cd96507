/**
 * Renders control answers for a terminal, without colours. Every line is cut to the terminal's width
 * (WIDTH when it does not say); the
 * daemon's answers are data, never trusted as text: control characters are shown escaped.
 */
import { zoneAt, zonedTime } from "../core/days.js";
import { printable } from "../core/printable.js";

export const WIDTH = 80;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** A whole sentence from the daemon (paths and the next step in it): shown up to 600 characters. */
function long(x: unknown): string {
  return printable(String(x), 600);
}

function s(x: unknown): string {
  return printable(typeof x === "string" ? x : x === undefined || x === null ? "-" : JSON.stringify(x), 200);
}

function list(x: unknown): unknown[] {
  return Array.isArray(x) ? x : [];
}

/** Cuts each line to `width` columns. */
export function fitWidth(text: string, width = WIDTH): string {
  return text
    .split("\n")
    .map((l) => (l.length > width ? `${l.slice(0, width - 1)}~` : l))
    .join("\n");
}

/**
 * Wraps each line to `width` columns at spaces (a word longer than a line is broken), continuation lines
 * indented by two: messages and errors are read whole, never cut.
 */
export function wrap(text: string, width = WIDTH): string {
  return text
    .split("\n")
    .flatMap((line) => {
      const out: string[] = [];
      let rest = line;
      let indent = "";
      while (indent.length + rest.length > width) {
        const room = width - indent.length;
        const space = rest.lastIndexOf(" ", room);
        const cut = space > 0 ? space : room;
        out.push(indent + rest.slice(0, cut).trimEnd());
        rest = rest.slice(cut).trimStart();
        indent = "  ";
      }
      out.push(indent + rest);
      return out;
    })
    .join("\n");
}

/** The unit's zone now, as the tables' headers name it (`times UTC+1`). */
function zone(): string {
  return zoneAt(Date.now());
}

/** A time on its own: date, time and zone. */
function when(ms: unknown): string {
  return typeof ms === "number" ? zonedTime(ms) : "-";
}

/** A time in a table row (`MM-DD HH:MM`; the table's header names the zone). */
function time(ms: unknown): string {
  if (typeof ms !== "number") return "-";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

function sessionLine(x: unknown): string {
  if (!isRecord(x)) return "?";
  return `${time(x.at)}  ${s(x.orderId).padEnd(26)} ${s(x.item).padStart(4)} ${s(x.price).padStart(8)}  ${s(x.result)}`;
}

/** The fleet link's line in `status` (none without a fleet link), and its backlog warning. */
function fleetLines(f: unknown): string[] {
  if (!isRecord(f)) return [];
  const lines = [
    `fleet ${s(f.state)}  backlog ${s(f.backlog)} events (oldest ${when(f.oldestAt)})  last ack ${when(f.lastAckAt)}`,
  ];
  if (typeof f.warning === "string") lines.push(`  fleet warning: ${f.warning}`);
  return lines;
}

/** `status`: the unit's service state, links, fleet link, audit log and last vends. */
function renderStatus(r: Record<string, unknown>): string {
  const links = isRecord(r.links) ? r.links : {};
  const audit = isRecord(r.audit) ? r.audit : {};
  const out = [
    `unit ${s(r.unitId)}: ${r.inService === true ? "IN SERVICE" : "OUT OF SERVICE"}`,
    ...list(r.reasons).map((x) => `  why: ${isRecord(x) ? s(x.detail) : "?"}`),
    `vmc ${s(links.vmc)}  payment ${s(links.payment)}  journal ${s(links.journal)}  beacon ${s(r.beacon)}`,
    `engine ${s(r.engine)}  service mode ${r.serviceMode === null ? "off" : s(r.serviceMode)}`,
    ...(typeof r.beaconId === "string" ? [`check-in beacon id ${s(r.beaconId)}`] : []),
    `unresolved sessions ${s(r.unresolved)}  config version ${s(r.configVersion)}`,
    `last update: ${s(r.update)}`,
    ...list(r.updateWaiting).map((x) => `  ${long(x)}`),
    ...fleetLines(r.fleet),
    `audit log: ${audit.ok === true ? "intact" : "BROKEN"} (${s(audit.detail)})`,
    `last vends (times ${zone()}):`,
    ...(list(r.lastVends).length === 0 ? ["  none"] : list(r.lastVends).map((x) => `  ${sessionLine(x)}`)),
  ];
  return out.join("\n");
}

/** `sales`: by day and item, then per day. */
function renderSales(r: Record<string, unknown>): string {
  const items = list(r.items);
  if (items.length === 0) return `no sales ${s(r.from)}..${s(r.to)} (days in ${zone()})`;
  return [
    `sales ${s(r.from)}..${s(r.to)} (${s(r.currency)}, days in ${zone()})`,
    "DAY         ITEM   COUNT      TOTAL",
    ...items.map((x) =>
      isRecord(x)
        ? `${s(x.day)}  ${s(x.item).padStart(4)}  ${s(x.count).padStart(6)}  ${s(x.total).padStart(9)}`
        : "?",
    ),
    "per day:",
    ...list(r.days).map((x) =>
      isRecord(x) ? `${s(x.day)}  ${s(x.count).padStart(12)}  ${s(x.total).padStart(9)}` : "?",
    ),
    `total       ${s(r.count).padStart(12)}  ${s(r.total).padStart(9)}`,
  ].join("\n");
}

/** `journal`: one session with its intents and events, or a list of sessions. */
function renderJournal(r: Record<string, unknown>): string {
  if (r.view === "session") {
    return [
      `times ${zone()}`,
      sessionLine(r.session),
      ...list(r.intents).map((x) => (isRecord(x) ? `  intent ${s(x.op)} ${s(x.amount)} ${s(x.state)}` : "?")),
      ...list(r.events).map((x) => (isRecord(x) ? `  ${time(x.at)} ${s(x.type)} ${s(x.data)}` : "?")),
    ].join("\n");
  }
  const lines = list(r.sessions);
  if (lines.length === 0) return `no ${r.view === "unresolved" ? "unresolved " : ""}sessions`;
  return [
    `TIME ${zone().padEnd(7)} ORDER                      ITEM    PRICE  RESULT`,
    ...lines.map(sessionLine),
  ].join("\n");
}

/** `errors`: why the unit is out of service, then recent warnings and faults. */
function renderErrors(r: Record<string, unknown>): string {
  const reasons = list(r.reasons).map((x) => (isRecord(x) ? `out of service: ${s(x.detail)}` : "?"));
  const lines = list(r.lines).map(s);
  return [...reasons, ...lines].join("\n") || "no recent warnings or faults";
}

/** `config`: what was applied, shown, staged or discarded. */
function renderConfig(r: Record<string, unknown>, result: unknown): string {
  if (typeof r.queued === "string")
    return [
      "applying (handed to the update applier):",
      ...list(r.changes).map((x) => `  ${s(x)}`),
      `queued as ${s(r.queued)}: vendd restarts with it and keeps it only if it comes back healthy;`,
      "log in again after the restart: status shows the outcome (and, until the applier takes it, the file waiting)",
      ...list(r.applier).map(long),
    ].join("\n");
  if (Array.isArray(r.entries))
    return [
      `config version ${s(r.version)}`,
      ...list(r.entries).map((x) => (isRecord(x) ? `${s(x.key)} = ${s(x.value)}` : "?")),
    ].join("\n");
  if (Array.isArray(r.changes) && r.version === undefined)
    return (
      list(r.changes)
        .map((x) => (isRecord(x) ? `${s(x.key)}: ${s(x.from)} -> ${s(x.to)}` : "?"))
        .join("\n") || "nothing staged"
    );
  if (Array.isArray(r.staged)) return ["staged:", ...list(r.staged).map((x) => `  ${s(x)}`)].join("\n");
  if (typeof r.discarded === "number") return `discarded ${r.discarded} staged change(s)`;
  return s(result);
}

/** Each command's answer as text, by command; anything else as it came. */
const RENDERERS = new Map<string, (r: Record<string, unknown>, result: unknown) => string>([
  ["status", renderStatus],
  ["sales", renderSales],
  ["journal", renderJournal],
  ["errors", renderErrors],
  ["logs", (r) => list(r.lines).map(s).join("\n") || "no log lines yet"],
  ["config", renderConfig],
  [
    "cancel",
    (r) =>
      r.cancelled === true ? `cancelling the test vend: ${s(r.detail)}` : `nothing cancelled: ${s(r.detail)}`,
  ],
  [
    "test-vend",
    (r) => `test vend ${s(r.orderId)}: ${s(r.result)} ${s(r.amount)}${r.reason ? ` (${s(r.reason)})` : ""}`,
  ],
  [
    "service",
    (r) =>
      r.inService === false
        ? `out of service: ${s(r.reason)}`
        : `back in service${r.inService === true ? "" : " (other reasons remain: status)"}`,
  ],
  ["dex", (r) => renderDex(r.read, r.push)],
  ["screen", (r) => renderScreenAnswer(r)],
  ["restart", () => "restarting the daemon"],
  ["logout", () => "logged out"],
]);

export function render(cmd: string, result: unknown): string {
  const r = isRecord(result) ? result : {};
  const renderer = RENDERERS.get(cmd);
  return renderer === undefined ? s(result) : renderer(r, result);
}

/** `screen` (issue 46): the display's screen as text (the PNG is for `vendd screen --png`). */
function renderScreenAnswer(r: Record<string, unknown>): string {
  if (r.screen === null || r.screen === undefined) return `display ${s(r.display)}: nothing shown yet`;
  const rows = Array.isArray(r.text) ? r.text.map((row) => fitWidth(s(row))) : [];
  return [`display ${s(r.display)}, screen ${s(r.screen)} (${s(r.width)}x${s(r.height)}):`, ...rows].join(
    "\n",
  );
}

/** The machine's latest push of events, under `dex last` (issue 42); nothing under `dex read`. */
function renderPush(push: unknown): string[] {
  if (push === undefined) return [];
  if (!isRecord(push)) return ["  pushes     none from the machine"];
  const events =
    Array.isArray(push.events) && push.events.length > 0 ? `: ${push.events.map(s).join(", ")}` : "";
  return push.outcome === "ok"
    ? [`  last push  ${s(push.at)}, ${s(push.bytes)} bytes${events}`]
    : [`  last push  ${s(push.at)}, failed: ${s(push.error)}`];
}

/** `dex read` / `dex last` (issue 36; each payment device apart and the machine's pushes, issue 42). */
function renderDex(read: unknown, push?: unknown): string {
  if (!isRecord(read)) return ["no DEX read yet", ...renderPush(push)].join("\n");
  const head = `DEX read ${s(read.at)} (${s(read.trigger)}): ${s(read.outcome)}`;
  if (read.outcome !== "ok") return [`${head}: ${s(read.error)}`, ...renderPush(push)].join("\n");
  const line = (label: string, v: unknown) => (v === null || v === undefined ? [] : [`  ${label}${s(v)}`]);
  return [
    head,
    `  ${s(read.bytes)} bytes, unit as ${s(read.role)}, G85 ${s(read.g85)}${read.g85 === "bad" ? ": counters unverified (G85)" : ""}, ${s(read.warnings)} warning(s)`,
    `  paid vends ${s(read.paid)}`,
    `  cashless   ${s(read.cashless)}`,
    ...line("cashless 1 ", read.cashless1),
    ...line("cashless 2 ", read.cashless2),
    ...line("tokens     ", read.tokens),
    `  cash       ${s(read.cash)}`,
    ...renderPush(push),
  ].join("\n");
}
