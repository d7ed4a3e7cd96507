/**
 * The control socket's read commands (the technician console's, issue 13): `sales`, `journal`, `errors`
 * and `logs`. Each validates its own arguments (`badArgs`) and answers plain JSON the console renders.
 */
import { localDay, rangeRefusal } from "../core/days.js";
import { formatAmount } from "../core/money.js";
import { printable } from "../core/printable.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { type ConsoleUnit, str } from "./consoleUnit.js";
import { CommandError, type CommandSpec } from "./control.js";

/** `sales [FROM [TO]]`: the journal's sales by day and item (today when no day is given). */
function salesCommand(u: ConsoleUnit): CommandSpec {
  return {
    audit: (a) => `sales ${str(a, "from") ?? ""}..${str(a, "to") ?? ""}`,
    run: (a) => {
      const today = localDay(u.now());
      const from = str(a, "from") ?? today;
      const to = str(a, "to") ?? from;
      const refusal = rangeRefusal(from, to);
      if (refusal !== null) throw new CommandError("badArgs", refusal);
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
  };
}

/** `journal recent|unresolved|SESSION`. */
function journalCommand(u: ConsoleUnit): CommandSpec {
  return {
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
  };
}

/** `logs [--follow]`: recent log lines, and new ones until the follow stops. */
function logsCommand(u: ConsoleUnit): CommandSpec {
  return {
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
  };
}

/** The read commands, in the order `help` learned them. */
export function readCommands(u: ConsoleUnit): [string, CommandSpec][] {
  return [
    ["sales", salesCommand(u)],
    ["journal", journalCommand(u)],
    [
      "errors",
      {
        run: () => ({
          reasons: u.status().reasons.map((r) => ({ code: r.code, detail: r.detail })),
          lines: (u.logs?.recentProblems(20) ?? []).map((l) => l.text),
        }),
      },
    ],
    ["logs", logsCommand(u)],
  ];
}
