/**
 * The option tables and help lines of the commands that run and inspect one unit: `vendd run`, `config`,
 * `doctor`, `screen`, `nfc`, `journal`, `reconcile` and `console`.
 */
import { type CommandHelp, help, helpLines, type OptionSpecs } from "./commandTable.js";

export const RUN_OPTIONS = {
  config: { type: "string", value: "FILE", required: true },
  secrets: { type: "string", value: "FILE" },
  help,
} as const satisfies OptionSpecs;

export const CONFIG_OPTIONS = {
  secrets: { type: "string", value: "FILE" },
  json: { type: "boolean" },
  origin: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const DOCTOR_OPTIONS = {
  config: { type: "string", value: "FILE" },
  secrets: { type: "string", value: "FILE" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const NFC_OPTIONS = {
  config: { type: "string", value: "FILE" },
  uri: { type: "string", value: "URI" },
  timeout: { type: "string", value: "SECONDS" },
  help,
} as const satisfies OptionSpecs;

export const JOURNAL_OPTIONS = {
  config: { type: "string", value: "FILE" },
  journal: { type: "string", value: "PATH" },
  secrets: { type: "string", value: "FILE" },
  json: { type: "boolean" },
  cancel: { type: "boolean" },
  limit: { type: "string", value: "N" },
  days: { type: "string", value: "N" },
  from: { type: "string", value: "DATE" },
  to: { type: "string", value: "DATE" },
  out: { type: "string", value: "FILE" },
  dex: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const CONSOLE_OPTIONS = {
  socket: { type: "string", value: "PATH" },
  "idle-timeout": { type: "string", value: "SECONDS" },
  config: { type: "string", value: "FILE" },
  journal: { type: "string", value: "PATH" },
  help,
} as const satisfies OptionSpecs;

export const SCREEN_OPTIONS = {
  config: { type: "string", value: "FILE" },
  socket: { type: "string", value: "PATH" },
  png: { type: "string", value: "FILE" },
  help,
} as const satisfies OptionSpecs;

export const RECONCILE_OPTIONS = {
  journal: { type: "string", value: "FILE" },
  config: { type: "string", value: "FILE" },
  from: { type: "string", value: "DATE", required: true },
  to: { type: "string", value: "DATE", required: true },
  reporting: { type: "string", value: "FILE" },
  format: { type: "string", value: "table|csv|json" },
  help,
} as const satisfies OptionSpecs;

/** The help lines of these commands, in the order `vendd --help` lists them. */
export const UNIT_COMMANDS: readonly CommandHelp[] = [
  ...helpLines("run", RUN_OPTIONS, [
    {
      words: "run",
      summary: "run the unit daemon (what systemd starts); refuses an invalid config, listing every error",
    },
  ]),
  ...helpLines("config", CONFIG_OPTIONS, [
    {
      words: "config validate FILE",
      only: ["secrets"],
      summary: "check a config file (and its secrets); prints every error by path, exits 1",
    },
    {
      words: "config print FILE",
      only: ["secrets", "json", "origin"],
      summary:
        "print the effective config with defaults (never secrets); --origin: each value with its layer (default, board, fleet, group:NAME, unit, identity)",
    },
    {
      words: "config split FILE",
      only: [],
      summary:
        "move the identity keys of a one-file config into identity.yaml next to it (the unit's identity file); FILE keeps the rest",
    },
  ]),
  ...helpLines("doctor", DOCTOR_OPTIONS, [
    {
      words: "doctor",
      summary: "check every configured device, the payment service, clock, disk and journal",
    },
  ]),
  ...helpLines("screen", SCREEN_OPTIONS, [
    {
      words: "screen",
      summary: "what the unit's display shows now, as text, and as a PNG file with --png (asks the daemon)",
    },
  ]),
  ...helpLines("nfc", NFC_OPTIONS, [
    {
      words: "nfc write-tag",
      summary: "write the check-in URI to the next blank NFC tag and verify it",
    },
  ]),
  ...helpLines("nfc", {}, [
    {
      words: "nfc hash-badge UID",
      summary: "print the scrypt hash of a technician badge's UID for nfc.badges",
    },
  ]),
  ...helpLines("journal", JOURNAL_OPTIONS, [
    {
      words: "journal [recent|unresolved|flagged|totals]",
      only: ["config", "journal", "json", "limit", "days"],
      summary: "the journal, read-only (safe while the daemon runs)",
    },
    {
      words: "journal settled",
      only: ["config", "journal", "json"],
      summary:
        "whether the journal may be deleted: exit 0 when all is settled and delivered, 3 when it is owed",
    },
    {
      words: "journal held",
      only: ["config", "secrets", "cancel", "json"],
      summary:
        "payments the service still holds for this unit; --cancel releases those the journal does not know",
    },
    {
      words: "journal export",
      only: ["config", "journal", "from", "to", "out", "dex"],
      summary:
        "finished sessions as JSON lines of the fleet's SessionData (read-only); --dex: the DEX reads instead",
    },
  ]),
  ...helpLines("reconcile", RECONCILE_OPTIONS, [
    {
      words: "reconcile",
      summary:
        "one unit without a fleet: its journal against the payment service's report; exits 1 on a difference",
    },
  ]),
  ...helpLines("console", CONSOLE_OPTIONS, [
    {
      words: "console",
      only: ["socket", "config", "idle-timeout"],
      summary: "technician console on this terminal (serial port): login, status, sales, config, test vend",
    },
  ]),
  ...helpLines("console", {}, [
    {
      words: "console hash-pin",
      summary: "read a PIN on standard input, print its scrypt hash for console.pinHash",
    },
  ]),
  ...helpLines("console", CONSOLE_OPTIONS, [
    {
      words: "console verify-audit",
      only: ["journal", "config"],
      summary: "check the console audit log's hash chain (read-only); exits 1 on a break",
    },
  ]),
];
