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
  /** Options this line needs though the table parses them as optional (`bundle create --version N`). */
  readonly required?: readonly string[];
  readonly summary: string;
}

/** A help line less its command and option table; `only` may name options of that table alone. */
export interface HelpLine<O extends OptionSpecs> {
  readonly words: string;
  readonly only?: readonly (keyof O & string)[];
  readonly required?: readonly (keyof O & string)[];
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

/** `--name VALUE` or `--name`, bracketed unless required (by its table, or by the line, `required`). */
export function formatOption(name: string, spec: OptionSpec, required = false): string {
  const text = spec.value === undefined ? `--${name}` : `--${name} ${spec.value}`;
  return spec.required || required ? text : `[${text}]`;
}

const WIDTH = 100;
export const INDENT = "  ";
export const SUMMARY_INDENT = "      ";

/** The synopsis of one command line, wrapped at 100 columns. */
export function synopsis(line: CommandHelp): string[] {
  const parts = Object.entries(line.options)
    .filter(([name]) => name !== "help" && (line.only === undefined || line.only.includes(name)))
    .map(([name, spec]) => formatOption(name, spec, line.required?.includes(name)));
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

/**
 * A command's own usage text, `usage: vendd WORDS [options]` and one line per further form, rendered from
 * the same help lines as `vendd --help`, so a command's usage cannot drift from the options it parses.
 */
export function renderCommandUsage(lines: readonly CommandHelp[]): string {
  const out: string[] = [];
  for (const line of lines) {
    const rows = synopsis({ ...line, words: `vendd ${line.words}` });
    rows.forEach((row, i) => {
      const body = row.slice(INDENT.length);
      out.push(i === 0 ? `${out.length === 0 ? "usage: " : "       "}${body}` : `       ${body}`);
    });
  }
  return `${out.join("\n")}\n`;
}
