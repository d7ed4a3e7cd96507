/**
 * The commands the control socket serves (the technician console's, issue 13), on top of the unit's
 * parts. Each validates its own arguments (`badArgs`) and answers plain JSON the console renders. This file
 * holds the table and the read and service commands; `status`, `config` and `test-vend` are in
 * statusCommand.ts, configCommand.ts and testVend.ts.
 */
import { localDay, rangeRefusal } from "../core/days.js";
import { formatAmount } from "../core/money.js";
import { printable } from "../core/printable.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import { describeEdit, parseEdit } from "./configApply.js";
import { configCommand } from "./configCommand.js";
import { type ConsoleUnit, str } from "./consoleUnit.js";
import { CommandError, type CommandSpec } from "./control.js";
import { dexCommand } from "./dexCommand.js";
import { controlStatus } from "./statusCommand.js";
import { cancelRunning, testVend } from "./testVend.js";

export function consoleCommands(u: ConsoleUnit): Map<string, CommandSpec> {
  const commands = new Map<string, CommandSpec>();

  // Public; audited once logged in. The console sends it for `help` and for a line it refuses (`refused`).
  commands.set("help", {
    public: true,
    audit: (a) => {
      const refused = str(a, "refused");
      if (refused !== undefined) return `${refused} (refused: usage)`;
      const topic = str(a, "topic");
      return topic === undefined ? "help" : `help ${topic}`;
    },
    run: (a) => {
      const refused = str(a, "refused");
      if (refused !== undefined)
        throw new CommandError("badArgs", `not a command line: ${printable(refused, 60)}`);
      return { commands: [...commands.keys(), "login"].sort() };
    },
  });

  // Runs beside a running test vend (immediate): cancels it.
  commands.set("cancel", { immediate: true, run: (_a, session) => cancelRunning(session) });

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
      return typeof e === "string" ? "config set (invalid)" : `config set ${describeEdit(e)}`;
    },
    run: (a, session) => configCommand(u, a, session),
  });

  commands.set(
    "dex",
    dexCommand(() => u.dex?.() ?? null),
  );

  commands.set("test-vend", {
    audit: (a) => `test-vend ${str(a, "amount") ?? ""}`.trim(),
    run: (a, session) => testVend(u, a, session),
  });

  return commands;
}
