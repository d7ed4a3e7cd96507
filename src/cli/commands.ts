/**
 * What each `vendd` subcommand accepts, in one place: the subcommands parse their arguments with the option
 * tables of their group (unitCommands.ts, updateCommands.ts, fleetCommands.ts, simCommands.ts; node:util
 * `parseArgs`, or their own small parser checked against them in tests), and the top-level help is rendered
 * here from the same tables, so it cannot omit an option a subcommand takes. This module imports nothing
 * heavy: `vendd --help` loads no subcommand.
 */
import type { CommandHelp, OptionSpec } from "./commandTable.js";
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

/** `--name VALUE` or `--name`, bracketed unless required. */
export function formatOption(name: string, spec: OptionSpec): string {
  const text = spec.value === undefined ? `--${name}` : `--${name} ${spec.value}`;
  return spec.required ? text : `[${text}]`;
}

const WIDTH = 100;
const INDENT = "  ";
const SUMMARY_INDENT = "      ";

/** The synopsis of one command line, wrapped at 100 columns. */
function synopsis(line: CommandHelp): string[] {
  const parts = Object.entries(line.options)
    .filter(([name]) => name !== "help" && (line.only === undefined || line.only.includes(name)))
    .map(([name, spec]) => formatOption(name, spec));
  const lines: string[] = [];
  let current = `${INDENT}${line.words}`;
  const lead = " ".repeat(INDENT.length + (line.words.split(" ")[0] ?? "").length + 1);
  for (const part of parts) {
    if (current.length + 1 + part.length > WIDTH) {
      lines.push(current);
      current = `${lead}${part}`;
    } else current += ` ${part}`;
  }
  lines.push(current);
  return lines;
}

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
