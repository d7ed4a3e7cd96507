/**
 * `vendd journal [recent|unresolved|flagged|totals] [--config FILE | --journal PATH] [--json] [--limit N]
 * [--days N]`: the journal for operators, without opening the database by hand. Read-only: a `readonly`
 * connection that never takes the journal lock, so it is safe while the daemon runs. `vendd journal held`
 * (journalHeld.ts) lists, and with `--cancel` releases, the payments the service still holds.
 * `vendd journal settled` answers whether the journal may be deleted (the package's postrm asks it before a
 * purge): 0 yes, 3 no (it holds unsettled sessions or events the fleet has not committed).
 * Exit codes: 0 shown, 1 no journal or an unreadable one, 2 usage error, 3 (settled) the journal is owed.
 */

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig } from "../config/load.js";
import { systemClock } from "../core/clock.js";
import { zonedTime } from "../core/days.js";
import { formatAmount } from "../core/money.js";
import { plural } from "../core/plural.js";
import { describeRefusal } from "../journal/problems.js";
import { type DayTotal, type JournalOwed, openJournalView, type SessionLine } from "../journal/view.js";
import type { CliIo } from "./command.js";
import { renderCommandUsage } from "./commandTable.js";
import { journalExportCommand } from "./journalExport.js";
import { heldCommand } from "./journalHeld.js";
import { formatColumns } from "./table.js";
import { JOURNAL_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const VIEWS = ["recent", "unresolved", "flagged", "totals", "settled"] as const;
type ViewName = (typeof VIEWS)[number];

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "journal"))}
Shows the unit's journal, read-only (safe while vendd runs):
  recent       the latest sessions: time, order id, item, price, result, amount captured (default)
  unresolved   sessions not settled yet (open, or unsettled: recovery retries them; a conflict needs you)
  flagged      sessions flagged for review, with the reason
  totals       per day: sessions, captured sessions, amount captured (--days N, default 7)
  settled      whether the journal may be deleted: exit 0 when every session is settled and the fleet
               has every event, 3 when it holds what exists nowhere else (a package purge asks this)
  held         payments the service still holds for this unit, and whether the journal knows them;
               --cancel releases those the journal does not know (stop vendd first; README,
               "Recovering a unit")
  export       finished sessions closed --from DATE --to DATE (local days, both included) as JSON lines
               of the fleet's SessionData, to --out FILE or standard output
--limit N caps the sessions shown (default 20). Default config: ${DEFAULT_CONFIG_FILE}.
`;

interface Options {
  config?: string;
  journal?: string;
  secrets?: string;
  json?: boolean;
  cancel?: boolean;
  limit?: string;
  days?: string;
  from?: string;
  to?: string;
  out?: string;
  help?: boolean;
}

/** Runs `vendd journal` with `argv` the arguments after `journal`. */
export async function journalCommand(argv: string[], io?: CliIo): Promise<number> {
  const out = io ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
  let values: Options;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: JOURNAL_OPTIONS,
    }));
  } catch (err) {
    return usage(out, err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    out.stdout.write(HELP);
    return 0;
  }
  const [view = "recent", ...extra] = positionals;
  if (extra.length > 0) return usage(out, `unexpected argument '${extra[0]}'`);
  if (view === "held") {
    if (values.journal !== undefined || values.limit !== undefined || values.days !== undefined)
      return usage(out, "held takes --config, --secrets, --cancel and --json");
    return heldCommand(values, out);
  }
  if (view === "export") {
    if (values.limit !== undefined || values.days !== undefined || values.cancel || values.json)
      return usage(out, "export takes --config or --journal, --from, --to, --out and --dex");
    return journalExportCommand(values, out);
  }
  if (values.from !== undefined || values.to !== undefined || values.out !== undefined)
    return usage(out, "--from, --to and --out go with 'export'");
  if (!isView(view)) return usage(out, `unknown view '${view}' (${VIEWS.join(", ")}, held, export)`);
  if (values.cancel || values.secrets !== undefined)
    return usage(out, "--cancel and --secrets go with 'held'");
  if (values.config !== undefined && values.journal !== undefined)
    return usage(out, "give --config FILE or --journal PATH, not both");
  const limit = count(values.limit, 20, 100_000);
  const days = count(values.days, 7, 36_500);
  if (limit === null) return usage(out, "--limit must be an integer from 1 to 100000");
  if (days === null) return usage(out, "--days must be an integer from 1 to 36500");
  const path = values.journal ?? journalPathOf(values.config ?? DEFAULT_CONFIG_FILE, out);
  if (path === null) return 1;
  if (!existsSync(path)) {
    out.stderr.write(`vendd journal: no journal at ${path} yet (vendd creates it when it first starts)\n`);
    return 1;
  }
  try {
    const v = openJournalView(path);
    try {
      if (view === "settled") {
        const owed = v.owed();
        out.stdout.write(renderOwed(owed, values.json === true, path));
        return owed.unsettled === 0 && owed.undelivered === 0 ? 0 : 3;
      }
      const text =
        view === "totals"
          ? renderTotals(v.totals(days, systemClock.now()), values.json === true, path)
          : renderSessions(view, v[view](limit), values.json === true, path);
      out.stdout.write(text);
      return 0;
    } finally {
      v.close();
    }
  } catch (err) {
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    out.stderr.write(`vendd journal: ${refusal}`);
    return 1;
  }
}

function usage(out: CliIo, message: string): number {
  out.stderr.write(`vendd journal: ${message}\n${HELP}`);
  return 2;
}

function isView(v: string): v is ViewName {
  return (VIEWS as readonly string[]).includes(v);
}

function count(text: string | undefined, fallback: number, max: number): number | null {
  if (text === undefined) return fallback;
  if (!/^\d{1,6}$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= max ? n : null;
}

/** The journal path of a config (secrets are not needed to read it); null after printing why not. */
export function journalPathOf(file: string, out: CliIo): string | null {
  try {
    return loadConfig(file, { env: out.env, requireSecrets: false }).config.journal.path;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.stderr.write(`vendd journal: invalid configuration ${file}:\n${err.message}\n`);
    return null;
  }
}

/** Local time, minutes, with its zone: "2025-06-01 14:05 UTC+2". */
export function localTime(ms: number): string {
  return zonedTime(ms);
}

function renderSessions(view: ViewName, lines: SessionLine[], json: boolean, path: string): string {
  if (json) {
    const sessions = lines.map((l) => ({ ...l, openedAt: new Date(l.openedAt).toISOString() }));
    return `${JSON.stringify({ journal: path, view, sessions })}\n`;
  }
  if (lines.length === 0) return `no ${view === "recent" ? "" : `${view} `}sessions in ${path}\n`;
  const money = (m: number | null) => (m === null ? "-" : formatAmount(m));
  if (view === "recent") {
    const rows = lines.map((l) => [
      localTime(l.openedAt),
      l.orderId,
      String(l.item),
      money(l.price),
      l.review ? `${l.result}*` : l.result,
      money(l.captured),
    ]);
    const note = lines.some((l) => l.review) ? "* flagged for review: vendd journal flagged\n" : "";
    return (
      formatColumns(["TIME", "ORDER", "ITEM", "PRICE", "RESULT", "CAPTURED"], rows, { right: [2, 3, 5] }) +
      note
    );
  }
  const rows = lines.map((l) => [
    localTime(l.openedAt),
    l.orderId,
    money(l.price),
    l.conflict ? "CONFLICT" : l.result,
    money(l.captured),
  ]);
  const notes = lines.map((l) => (l.reason === "" ? null : `why: ${l.reason}`));
  return formatColumns(["TIME", "ORDER", "PRICE", "RESULT", "CAPTURED"], rows, { right: [2, 4], notes });
}

function renderOwed(owed: JournalOwed, json: boolean, path: string): string {
  const mayDelete = owed.unsettled === 0 && owed.undelivered === 0;
  if (json) return `${JSON.stringify({ journal: path, view: "settled", ...owed, mayDelete })}\n`;
  if (mayDelete)
    return `${path}: every session is settled and the fleet has every event: the journal may be deleted\n`;
  const held = [
    owed.unsettled > 0 ? plural(owed.unsettled, "unsettled session", "unsettled sessions") : null,
    owed.undelivered > 0
      ? plural(owed.undelivered, "event the fleet has not committed", "events the fleet has not committed")
      : null,
  ].filter((x) => x !== null);
  return (
    `${path} holds ${held.join(" and ")}: keep it.\n` +
    "Settle first: run vendd (systemctl start vendd) with the payment service and the fleet reachable " +
    "until `vendd journal unresolved` shows no session, then ask again: `vendd journal settled`.\n"
  );
}

function renderTotals(days: DayTotal[], json: boolean, path: string): string {
  if (json) return `${JSON.stringify({ journal: path, view: "totals", days })}\n`;
  if (days.length === 0) return `no sessions in ${path} in that period\n`;
  const rows = days.map((d) => [
    d.day,
    String(d.sessions),
    String(d.captured),
    formatAmount(d.capturedAmount),
  ]);
  return formatColumns(["DAY", "SESSIONS", "CAPTURED", "AMOUNT"], rows, { right: [1, 2, 3] });
}
