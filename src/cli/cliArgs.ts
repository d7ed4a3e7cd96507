/**
 * The option parsing that subcommands without positionals share: strict `parseArgs` of their options table
 * (src/cli/commands.ts), a usage error on stderr (exit 2) and `--help` on stdout (exit 0).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { printable } from "../core/printable.js";
import type { CliIo } from "./command.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

type Values<O extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>
>["values"];

/**
 * `argv` parsed against `options`, or the exit code when the command is done already: 2 after
 * `vendd <command>: <why>` and `help` on stderr, 0 after `help` on stdout for `--help` (`options` must
 * have a boolean `help`).
 */
export function parseOptionsOrExit<O extends OptionsConfig>(
  command: string,
  argv: string[],
  options: O,
  help: string,
  out: CliIo,
): Values<O> | number {
  let values: Values<O>;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options }));
  } catch (e) {
    out.stderr.write(`vendd ${command}: ${argsProblem(e)}\n${help}`);
    return 2;
  }
  if ("help" in values && values.help === true) {
    out.stdout.write(help);
    return 0;
  }
  return values;
}

/**
 * A command-line parse error in the command's own words (issue 43): "unknown option --x", "--db needs a
 * value", never Node's argument parser text (its advice about `--` and positionals).
 */
export function argsProblem(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const name = quoted.replace(/ <value>$/, "");
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${printable(name, 64)}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE")
    return / argument missing$/.test(message)
      ? `${printable(name, 64)} needs a value`
      : `${printable(name, 64)} takes no value`;
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return `unexpected argument ${printable(name, 64)}`;
  return message;
}
