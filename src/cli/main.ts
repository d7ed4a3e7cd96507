#!/usr/bin/env node
/**
 * The `vendd` command. Each subcommand lives in its own module, loaded only when used, and returns the
 * process exit code.
 */
import { causeOf, closeAll } from "../core/fatal.js";
import { printable } from "../core/printable.js";
import type { Command } from "./command.js";
import { renderUsage } from "./commands.js";
import { holdInterrupts } from "./interrupts.js";
import { packageVersion } from "./version.js";

/** Rendered from the option tables the subcommands parse with (commands.ts). */
const USAGE = renderUsage();

async function load(name: string): Promise<Command | null> {
  switch (name) {
    case "demo":
      return (await import("./demo.js")).demoCommand;
    case "run":
      return (await import("./run.js")).runCommand;
    case "config":
      return (await import("./config.js")).configCommand;
    case "emulator":
      return (await import("./emulator.js")).emulatorCommand;
    case "sim-vmc":
      return (await import("./simVmc.js")).simVmcCommand;
    case "sim-dex":
      return (await import("./simDex.js")).simDexCommand;
    case "doctor":
      return (await import("./doctor.js")).doctorCommand;
    case "nfc":
      return (await import("./nfc.js")).nfcCommand;
    case "screen":
      return (await import("./screen.js")).screenCommand;
    case "journal":
      return (await import("./journal.js")).journalCommand;
    case "console":
      return (await import("./console.js")).consoleCommand;
    case "keys":
      return (await import("./keys.js")).keysCommand;
    case "bundle":
      return (await import("./bundle.js")).bundleCommand;
    case "reconcile":
      return (await import("./reconcile.js")).reconcileCommand;
    case "fleet":
      return (await import("./fleet.js")).fleetCommand;
    default:
      return null;
  }
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    process.stdout.write(`vendd ${packageVersion()}\n`);
    return 0;
  }
  if (name === "demo") holdInterrupts();
  const command = await load(name);
  if (!command) {
    process.stderr.write(`vendd: unknown command '${printable(name, 64)}'\n${USAGE}`);
    return 2;
  }
  return command(rest);
}

/**
 * The one fatal path: a command that fails (a non-zero code, or a throw) has its cause printed, what it
 * registered as open is closed (src/core/fatal.ts), and the process exits at once with that code; nothing
 * left open (a listening socket, a pool, a timer) can keep a failed process alive.
 */
async function finish(code: number): Promise<never> {
  await closeAll();
  process.exit(code);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    if (code !== 0) void finish(code);
  },
  (err: unknown) => {
    process.stderr.write(`vendd: ${printable(causeOf(err), 1000)}\n`);
    void finish(1);
  },
);
