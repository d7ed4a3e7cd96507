#!/usr/bin/env node
/**
 * The `vendd` command. Each subcommand lives in its own module, loaded only when used, and returns the
 * process exit code.
 */

const USAGE = `usage: vendd <command> [options]

commands:
  demo [--vends N] [--json] [--driver v10|legacy] [--flow selection|checkin] [--board sim|sim-pulse]
                                                     run a simulated unit against the local emulator
  run --config FILE                                  run the unit daemon
  config validate FILE [--secrets FILE]              check a config file; prints every error by path
  config print FILE [--secrets FILE] [--json]        print the effective config with defaults (no secrets)
  emulator [--port N] [--host H] [--json]            run the payment-service emulator
  sim-vmc --device PATH [--script FILE]              simulate an MDB cashless adapter + VMC on a PTY
  doctor [--config FILE] [--secrets FILE] [--json]   check every configured device and the payment service
  nfc write-tag [--config FILE] [--uri URI]          write the check-in URI to the next blank NFC tag
  journal [recent|unresolved|flagged|totals|held] [--config FILE | --journal PATH] [--json] [--limit N]
          [--days N] [--secrets FILE] [--cancel]     the journal, read-only; held: payments the service holds
  help                                               this text
`;

export type Command = (argv: string[]) => Promise<number>;

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
    case "doctor":
      return (await import("./doctor.js")).doctorCommand;
    case "nfc":
      return (await import("./nfc.js")).nfcCommand;
    case "journal":
      return (await import("./journal.js")).journalCommand;
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
  const command = await load(name);
  if (!command) {
    process.stderr.write(`vendd: unknown command '${name}'\n${USAGE}`);
    return 2;
  }
  return command(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`vendd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
