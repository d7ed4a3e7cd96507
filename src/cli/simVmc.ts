import { existsSync, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { startVmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { socatAvailable } from "../../drivers/vmc/simulator/pty.js";
import { runScriptLine, SCRIPT_HELP } from "../../drivers/vmc/simulator/script.js";
import { renderCommandUsage } from "./commandTable.js";
import { SIMULATION_COMMANDS } from "./simCommands.js";

const USAGE = `${renderCommandUsage(SIMULATION_COMMANDS.filter((c) => c.command === "sim-vmc"))}
Plays the MDB cashless adapter and the vending machine behind it (vending-mdb §2) on a pseudo-terminal.
  --device PATH   make a PTY linked at PATH (needs socat), or attach to PATH when it is an existing tty
  --dex-port PATH the machine's DEX port on a second PTY linked at PATH (docs/dex.md): its EVA-DTS audit
                  counters follow every vend this machine completes (cashless through the unit, cash)
  --ack-rate N    r,ACK lines per second (default 20)
  --script FILE   run the commands in FILE, then exit; without it, commands are read from stdin
  --quiet         do not echo host commands

${SCRIPT_HELP}
`;

interface Args {
  device?: string;
  dexPort?: string;
  ackRate: number;
  script?: string;
  quiet: boolean;
}

/** Reads the arguments (the options of SIM_VMC_OPTIONS in simCommands.ts); a usage error as a string. */
export function parseArgs(argv: string[]): Args | string {
  const args: Args = { ackRate: 20, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = argv[i + 1];
    if (a === "--quiet") args.quiet = true;
    else if (
      (a === "--device" || a === "--script" || a === "--ack-rate" || a === "--dex-port") &&
      value !== undefined
    ) {
      i++;
      if (a === "--device") args.device = value;
      else if (a === "--dex-port") args.dexPort = value;
      else if (a === "--script") args.script = value;
      else if (/^\d{1,6}$/.test(value)) args.ackRate = Number(value);
      else return `--ack-rate must be a whole number, not '${value}'`;
    } else return `unknown or incomplete option '${a}'`;
  }
  return args;
}

/** `vendd sim-vmc`: returns the exit code (0 done, 1 failure, 2 usage). */
export async function simVmcCommand(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  const args = parseArgs(argv);
  if (typeof args === "string") {
    process.stderr.write(`vendd sim-vmc: ${args}\n${USAGE}`);
    return 2;
  }
  const attach =
    args.device !== undefined && existsSync(args.device) && statSync(args.device).isCharacterDevice();
  if ((!attach || args.dexPort !== undefined) && !socatAvailable()) {
    process.stderr.write("vendd sim-vmc: socat is needed to make a PTY (apt-get install socat)\n");
    return 1;
  }
  const sim = await startVmcSimulator({
    ackRate: args.ackRate,
    ...(attach ? { attach: args.device } : args.device ? { linkPath: args.device } : {}),
    ...(args.dexPort === undefined ? {} : { dex: { linkPath: args.dexPort } }),
  });
  const print = (text: string) => process.stdout.write(`${text}\n`);
  const off = args.quiet ? () => undefined : sim.onCommand((line) => print(`> ${line}`));
  print(
    attach
      ? `attached to ${sim.devicePath}`
      : `device: ${sim.devicePath}  (point the mdb-adapter driver here)`,
  );
  if (sim.dex) print(`dex: ${sim.dex.sim.devicePath}  (point dex.device here)`);
  try {
    const lines = args.script
      ? readFileSync(args.script, "utf8").split("\n")
      : createInterface({ input: process.stdin, terminal: false });
    for await (const line of lines) {
      if (!(await runScriptLine(sim, line, print))) break;
    }
    return 0;
  } finally {
    off();
    await sim.close();
  }
}
