import { existsSync, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { startDexSimulator } from "../../drivers/dex/simulator/index.js";
import { DEX_SCRIPT_HELP, runDexScriptLine } from "../../drivers/dex/simulator/script.js";
import { socatAvailable } from "../../drivers/vmc/simulator/pty.js";
import { renderCommandUsage } from "./commandTable.js";
import { SIMULATION_COMMANDS } from "./simCommands.js";

const USAGE = `${renderCommandUsage(SIMULATION_COMMANDS.filter((c) => c.command === "sim-dex"))}
Plays a vending machine's DEX port (docs/dex.md): answers a DEX/UCS reader on a pseudo-terminal with an
EVA-DTS audit file that follows the vends you give it.
  --device PATH   make a PTY linked at PATH (needs socat), or attach to PATH when it is an existing tty
  --role R        slave (default: the reader sends the first ENQ) or master (the machine does)
  --script FILE   run the commands in FILE, then exit; without it, commands are read from stdin

${DEX_SCRIPT_HELP}
`;

interface Args {
  device?: string;
  role: string;
  script?: string;
}

/** Reads the arguments (SIM_DEX_OPTIONS in simCommands.ts); a usage error as a string. */
export function parseArgs(argv: string[]): Args | string {
  const args: Args = { role: "slave" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = argv[i + 1];
    if ((a === "--device" || a === "--script" || a === "--role") && value !== undefined) {
      i++;
      if (a === "--device") args.device = value;
      else if (a === "--script") args.script = value;
      else args.role = value;
    } else return `unknown or incomplete option '${a}'`;
  }
  return args;
}

/** `vendd sim-dex`: returns the exit code (0 done, 1 failure, 2 usage). */
export async function simDexCommand(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  const args = parseArgs(argv);
  if (typeof args === "string" || (args.role !== "slave" && args.role !== "master")) {
    const why =
      typeof args === "string" ? args : `--role must be slave or master, not '${args.role.slice(0, 20)}'`;
    process.stderr.write(`vendd sim-dex: ${why}\n${USAGE}`);
    return 2;
  }
  const role = args.role;
  const attach =
    args.device !== undefined && existsSync(args.device) && statSync(args.device).isCharacterDevice();
  if (!attach && !socatAvailable()) {
    process.stderr.write("vendd sim-dex: socat is needed to make a PTY (apt-get install socat)\n");
    return 1;
  }
  const sim = await startDexSimulator({
    role,
    ...(attach ? { attach: args.device } : { linkPath: args.device ?? `/tmp/vendd-dex-${process.pid}` }),
  });
  const print = (text: string) => process.stdout.write(`${text}\n`);
  print(`device: ${sim.devicePath}  (point the DEX reader here: dex.port)`);
  try {
    const lines = args.script
      ? readFileSync(args.script, "utf8").split("\n")
      : createInterface({ input: process.stdin, terminal: false });
    for await (const line of lines) {
      if (!(await runDexScriptLine(sim, line, print))) break;
    }
    return 0;
  } finally {
    await sim.close();
  }
}
