/**
 * The option tables and help lines of the simulators: `vendd demo` (a simulated unit, or three and a fleet
 * server), `emulator` (the payment service) and `sim-vmc` (an MDB adapter and its VMC).
 */
import { type CommandHelp, help, helpLines, type OptionSpecs } from "./commandTable.js";

export const DEMO_OPTIONS = {
  vends: { type: "string", value: "N" },
  json: { type: "boolean" },
  driver: { type: "string", value: "v10|legacy" },
  "legacy-mode": { type: "string", value: "reservation|payment" },
  board: { type: "string", value: "sim|sim-pulse" },
  flow: { type: "string", value: "selection|checkin" },
  vmc: { type: "string", value: "auto|pty|sim" },
  chaos: { type: "string", value: "SEED" },
  journal: { type: "string", value: "FILE" },
  seed: { type: "string", value: "N" },
  "log-level": { type: "string", value: "LEVEL" },
  fleet: { type: "boolean" },
  "fleet-db": { type: "string", value: "FILE" },
  "fleet-password-file": { type: "string", value: "FILE" },
  "fleet-listen": { type: "string", value: "HOST:PORT" },
  dex: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd emulator` parses these itself (src/cli/emulator.ts); a test keeps the two in step. */
export const EMULATOR_OPTIONS = {
  port: { type: "string", value: "N" },
  host: { type: "string", value: "H" },
  json: { type: "boolean" },
  seed: { type: "string", value: "FILE" },
  "poll-delay-ms": { type: "string", value: "N" },
  "deprecated-tls": { type: "string", value: "DIR" },
  help,
} as const satisfies OptionSpecs;

/** `vendd sim-vmc` parses these itself (src/cli/simVmc.ts); a test keeps the two in step. */
export const SIM_VMC_OPTIONS = {
  device: { type: "string", value: "PATH" },
  "dex-port": { type: "string", value: "PATH" },
  "ack-rate": { type: "string", value: "N" },
  script: { type: "string", value: "FILE" },
  quiet: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd sim-dex` parses these itself (src/cli/simDex.ts); a test keeps the two in step. */
export const SIM_DEX_OPTIONS = {
  device: { type: "string", value: "PATH" },
  role: { type: "string", value: "slave|master" },
  script: { type: "string", value: "FILE" },
  help,
} as const satisfies OptionSpecs;

/** The help lines of these commands, in the order `vendd --help` lists them. */
export const SIMULATION_COMMANDS: readonly CommandHelp[] = [
  ...helpLines("demo", DEMO_OPTIONS, [
    {
      words: "demo",
      summary:
        "run a simulated unit against the local emulator; --chaos SEED is the crash self-check; --fleet three units and a fleet server; --dex reads the machine's DEX audit",
    },
  ]),
  ...helpLines("emulator", EMULATOR_OPTIONS, [
    {
      words: "emulator",
      summary: "run the payment-service emulator",
    },
  ]),
  ...helpLines("sim-vmc", SIM_VMC_OPTIONS, [
    {
      words: "sim-vmc",
      summary:
        "simulate an MDB cashless adapter and its VMC on a pseudo-terminal; --dex-port PATH adds the machine's DEX port",
    },
  ]),
  ...helpLines("sim-dex", SIM_DEX_OPTIONS, [
    {
      words: "sim-dex",
      summary: "simulate a vending machine's DEX port (EVA-DTS audit data) on a pseudo-terminal",
    },
  ]),
];
