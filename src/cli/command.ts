/** A `vendd` subcommand: its arguments after the command's name in, the process exit code out. */
export type Command = (argv: string[]) => Promise<number>;

/** Where the command writes and what environment it reads; the process's own by default. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}
