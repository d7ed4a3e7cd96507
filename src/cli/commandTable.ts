/**
 * The shapes of the command tables (src/cli/commands.ts): an option as the subcommands parse it and the
 * help shows it, a line of the top-level help, and `helpLines`, which names a command and its option table
 * once for all the help lines that take them.
 */

/** One option: its parser type, and for help its value placeholder or choices (`N`, `v10|legacy`). */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly value?: string;
  /** Shown without brackets in the synopsis. */
  readonly required?: boolean;
  /** May be given more than once (node:util `parseArgs`'s `multiple`). */
  readonly multiple?: boolean;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** `--help`, `-h`: every command takes it. */
export const help = { type: "boolean", short: "h" } as const;

/** One line of the top-level help: the command words, the options shown, what it does. */
export interface CommandHelp {
  /** The subcommand as dispatched by main.ts (`config`), for tests. */
  readonly command: string;
  /** What follows `vendd`, e.g. `config validate FILE`. */
  readonly words: string;
  readonly options: OptionSpecs;
  /** Options of `options` this line shows; default all. */
  readonly only?: readonly string[];
  readonly summary: string;
}

/** A help line less its command and option table; `only` may name options of that table alone. */
export interface HelpLine<O extends OptionSpecs> {
  readonly words: string;
  readonly only?: readonly (keyof O & string)[];
  readonly summary: string;
}

/** The help lines of `command` that take the options of `options`. */
export function helpLines<O extends OptionSpecs>(
  command: string,
  options: O,
  lines: readonly HelpLine<O>[],
): CommandHelp[] {
  return lines.map((line) => ({ command, options, ...line }));
}
