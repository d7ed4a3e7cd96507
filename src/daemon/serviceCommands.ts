/**
 * The control socket's commands that change the unit (the technician console's, issue 13): `service`,
 * `restart`, `config`, `dex` and `test-vend` (the last three in configCommand.ts, dexCommand.ts and
 * testVend.ts).
 */
import { describeEdit, parseEdit } from "./configApply.js";
import { configCommand } from "./configCommand.js";
import { type ConsoleUnit, str } from "./consoleUnit.js";
import { CommandError, type CommandSpec } from "./control.js";
import { dexCommand } from "./dexCommand.js";
import { testVend } from "./testVend.js";

/** `service in|out [REASON]`: out of service by the console, or back. */
function serviceCommand(u: ConsoleUnit): CommandSpec {
  return {
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
  };
}

/** The commands that change the unit, in the order `help` learned them. */
export function serviceCommands(u: ConsoleUnit): [string, CommandSpec][] {
  return [
    ["service", serviceCommand(u)],
    [
      "restart",
      {
        run: () => {
          setImmediate(() => u.restart("restart from the console"));
          return { restarting: true };
        },
      },
    ],
    [
      "config",
      {
        audit: (a) => {
          const action = str(a, "action") ?? "?";
          if (action !== "set") return `config ${action}`;
          const e = parseEdit(a.key, a.value);
          return typeof e === "string" ? "config set (invalid)" : `config set ${describeEdit(e)}`;
        },
        run: (a, session) => configCommand(u, a, session),
      },
    ],
    ["dex", dexCommand(() => u.dex?.() ?? null)],
    [
      "test-vend",
      {
        audit: (a) => `test-vend ${str(a, "amount") ?? ""}`.trim(),
        run: (a, session) => testVend(u, a, session),
      },
    ],
  ];
}
