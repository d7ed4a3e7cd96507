/**
 * `vendd fleet <subcommand>`: the fleet server's commands. Each subcommand lives in its own module, loaded
 * only when used. (Issue 17 adds `reconcile`; the other fleet subcommands join here.)
 */
const HELP = `usage: vendd fleet reconcile --from DATE --to DATE [--format table|csv|json] [--db FILE|URL]
                             [--reporting FILE]
`;

type Sub = (argv: string[]) => Promise<number>;

async function load(name: string): Promise<Sub | null> {
  switch (name) {
    case "reconcile":
      return (await import("./fleetReconcile.js")).fleetReconcileCommand;
    default:
      return null;
  }
}

/** Runs `vendd fleet` with `argv` the arguments after `fleet`. */
export async function fleetCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(HELP);
    return name === undefined ? 2 : 0;
  }
  const sub = await load(name);
  if (sub === null) {
    process.stderr.write(
      `vendd fleet: unknown subcommand '${name.slice(0, 40).replace(/[^\x20-\x7e]/g, "?")}'\n${HELP}`,
    );
    return 2;
  }
  return sub(rest);
}
