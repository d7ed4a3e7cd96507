/**
 * What each `vendd` subcommand accepts, in one place: the subcommands parse their arguments with the option
 * tables of their group (unitCommands.ts, updateCommands.ts, fleetCommands.ts, simCommands.ts; node:util
 * `parseArgs`, or their own small parser checked against them in tests), and the top-level help is rendered
 * here from the same tables, so it cannot omit an option a subcommand takes. This module imports nothing
 * heavy: `vendd --help` loads no subcommand.
 */
import { type CommandHelp, INDENT, SUMMARY_INDENT, synopsis } from "./commandTable.js";

export { formatOption } from "./commandTable.js";

import { FLEET_COMMANDS } from "./fleetCommands.js";
import { SIMULATION_COMMANDS } from "./simCommands.js";
import { UNIT_COMMANDS } from "./unitCommands.js";
import { UPDATE_COMMANDS } from "./updateCommands.js";

/** Every command line of `vendd`, in the order the help lists them. */
export const COMMANDS: readonly CommandHelp[] = [
  ...UNIT_COMMANDS,
  ...UPDATE_COMMANDS,
  ...FLEET_COMMANDS,
  ...SIMULATION_COMMANDS,
];

/** The top-level help of `vendd`. */
export function renderUsage(commands: readonly CommandHelp[] = COMMANDS): string {
  const body = commands.flatMap((c) => [...synopsis(c), `${SUMMARY_INDENT}${c.summary}`]);
  return [
    "usage: vendd <command> [options]",
    "",
    "commands:",
    ...body,
    `${INDENT}help`,
    `${SUMMARY_INDENT}this text (also --help, -h); every command takes --help`,
    "",
    "options:",
    `${INDENT}--version, -V     print the version of vendd`,
    "",
  ].join("\n");
}
