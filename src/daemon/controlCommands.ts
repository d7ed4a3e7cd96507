/**
 * The commands the control socket serves (the technician console's, issue 13), on top of the unit's
 * parts. Each validates its own arguments (`badArgs`) and answers plain JSON the console renders. This file
 * holds the session's own commands and puts the tables together: the read commands are in readCommands.ts,
 * those that change the unit in serviceCommands.ts, `status` in statusCommand.ts.
 */
import { printable } from "../core/printable.js";
import { type ConsoleUnit, str } from "./consoleUnit.js";
import { CommandError, type CommandSpec } from "./control.js";
import { readCommands } from "./readCommands.js";
import { screenCommand } from "./screenCommand.js";
import { serviceCommands } from "./serviceCommands.js";
import { controlStatus } from "./statusCommand.js";
import { cancelRunning } from "./testVend.js";

/** The session's own commands: `help`, `cancel`, `logout`, and the public `status`. */
function sessionCommands(u: ConsoleUnit, names: () => string[]): [string, CommandSpec][] {
  return [
    // Public; audited once logged in. The console sends it for `help` and for a line it refuses (`refused`).
    [
      "help",
      {
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
          return { commands: [...names(), "login"].sort() };
        },
      },
    ],
    // Runs beside a running test vend (immediate): cancels it.
    ["cancel", { immediate: true, run: (_a, session) => cancelRunning(session) }],
    [
      "logout",
      {
        run: (_a, session) => {
          session.who = null;
          return { loggedOut: true };
        },
      },
    ],
    // Public: the update applier's health gate asks for it without a login (the socket is 0600).
    ["status", { public: true, run: () => controlStatus(u) }],
    // Public like `status`: it shows what anyone in front of the machine sees (`vendd screen`).
    ["screen", screenCommand(u)],
  ];
}

export function consoleCommands(u: ConsoleUnit): Map<string, CommandSpec> {
  const commands = new Map<string, CommandSpec>();
  for (const [name, spec] of [
    ...sessionCommands(u, () => [...commands.keys()]),
    ...readCommands(u),
    ...serviceCommands(u),
  ])
    commands.set(name, spec);
  return commands;
}
