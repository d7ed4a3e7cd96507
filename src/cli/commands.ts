/**
 * What each `vendd` subcommand accepts, in one place: the subcommands parse their arguments with these
 * option tables (node:util `parseArgs`, or their own small parser checked against them in tests), and the
 * top-level help is rendered from the same tables, so it cannot omit an option a subcommand takes. This
 * module imports nothing heavy: `vendd --help` loads no subcommand.
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

const help = { type: "boolean", short: "h" } as const;

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
  help,
} as const satisfies OptionSpecs;

export const RUN_OPTIONS = {
  config: { type: "string", value: "FILE", required: true },
  secrets: { type: "string", value: "FILE" },
  help,
} as const satisfies OptionSpecs;

export const CONFIG_OPTIONS = {
  secrets: { type: "string", value: "FILE" },
  json: { type: "boolean" },
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
  help,
} as const satisfies OptionSpecs;

export const CONSOLE_OPTIONS = {
  socket: { type: "string", value: "PATH" },
  "idle-timeout": { type: "string", value: "SECONDS" },
  config: { type: "string", value: "FILE" },
  journal: { type: "string", value: "PATH" },
  help,
} as const satisfies OptionSpecs;

/** `vendd emulator` parses these itself (src/cli/emulator.ts); a test keeps the two in step. */
export const EMULATOR_OPTIONS = {
  port: { type: "string", value: "N" },
  host: { type: "string", value: "H" },
  json: { type: "boolean" },
  seed: { type: "string", value: "FILE" },
  "poll-delay-ms": { type: "string", value: "N" },
  help,
} as const satisfies OptionSpecs;

/** `vendd sim-vmc` parses these itself (src/cli/simVmc.ts); a test keeps the two in step. */
export const SIM_VMC_OPTIONS = {
  device: { type: "string", value: "PATH" },
  "ack-rate": { type: "string", value: "N" },
  script: { type: "string", value: "FILE" },
  quiet: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const KEYS_OPTIONS = {
  "out-dir": { type: "string", value: "DIR" },
  "passphrase-file": { type: "string", value: "FILE" },
  kdf: { type: "string", value: "sensitive|interactive" },
  force: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const BUNDLE_OPTIONS = {
  config: { type: "string", value: "FILE" },
  release: { type: "string", value: "TARBALL" },
  version: { type: "string", value: "N" },
  targets: { type: "string", value: "FLEET|UNIT,..." },
  expires: { type: "string", value: "DATE" },
  out: { type: "string", value: "FILE" },
  "secret-key": { type: "string", value: "FILE" },
  "passphrase-file": { type: "string", value: "FILE" },
  attach: { type: "string", value: "SIG" },
  "public-key": { type: "string", value: "FILE" },
  inbox: { type: "string", value: "DIR" },
  recover: { type: "boolean" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const FLEET_USER_OPTIONS = {
  db: { type: "string", value: "FILE|URL" },
  role: { type: "string", value: "viewer|manager" },
  "password-file": { type: "string", value: "FILE" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const FLEET_ENROLL_OPTIONS = {
  config: { type: "string", value: "FILE" },
  key: { type: "string", value: "FILE" },
  url: { type: "string", value: "URL" },
  label: { type: "string", value: "TEXT" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

export const FLEET_RECONCILE_OPTIONS = {
  from: { type: "string", value: "DATE", required: true },
  to: { type: "string", value: "DATE", required: true },
  format: { type: "string", value: "table|csv|json" },
  db: { type: "string", value: "FILE|URL" },
  reporting: { type: "string", value: "FILE" },
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

/** `vendd fleet serve|units|approve|revoke|bundle upload` (src/cli/fleetServe.ts, fleetAdmin.ts). */
export const FLEET_SERVER_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  listen: { type: "string", value: "HOST:PORT" },
  "time-zone": { type: "string", value: "TZ" },
  "bundle-key": { type: "string", value: "FILE", multiple: true },
  "log-level": { type: "string", value: "LEVEL" },
  json: { type: "boolean" },
  by: { type: "string", value: "NAME" },
  help,
} as const satisfies OptionSpecs;

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

/** Every command line of `vendd`, in the order the help lists them. */
export const COMMANDS: readonly CommandHelp[] = [
  {
    command: "run",
    words: "run",
    options: RUN_OPTIONS,
    summary: "run the unit daemon (what systemd starts); refuses an invalid config, listing every error",
  },
  {
    command: "config",
    words: "config validate FILE",
    options: CONFIG_OPTIONS,
    only: ["secrets"],
    summary: "check a config file (and its secrets); prints every error by path, exits 1",
  },
  {
    command: "config",
    words: "config print FILE",
    options: CONFIG_OPTIONS,
    summary: "print the effective config with defaults (never secrets)",
  },
  {
    command: "doctor",
    words: "doctor",
    options: DOCTOR_OPTIONS,
    summary: "check every configured device, the payment service, clock, disk and journal",
  },
  {
    command: "nfc",
    words: "nfc write-tag",
    options: NFC_OPTIONS,
    summary: "write the check-in URI to the next blank NFC tag and verify it",
  },
  {
    command: "nfc",
    words: "nfc hash-badge UID",
    options: {},
    summary: "print the scrypt hash of a technician badge's UID for nfc.badges",
  },
  {
    command: "journal",
    words: "journal [recent|unresolved|flagged|totals|held]",
    options: JOURNAL_OPTIONS,
    only: ["config", "journal", "secrets", "json", "cancel", "limit", "days"],
    summary: "the journal, read-only (safe while the daemon runs); held: payments the service still holds",
  },
  {
    command: "journal",
    words: "journal export",
    options: JOURNAL_OPTIONS,
    only: ["config", "journal", "from", "to", "out"],
    summary: "finished sessions as JSON lines of the fleet's SessionData (read-only)",
  },
  {
    command: "reconcile",
    words: "reconcile",
    options: RECONCILE_OPTIONS,
    summary:
      "one unit without a fleet: its journal against the payment service's report; exits 1 on a difference",
  },
  {
    command: "console",
    words: "console",
    options: CONSOLE_OPTIONS,
    only: ["socket", "config", "idle-timeout"],
    summary: "technician console on this terminal (serial port): login, status, sales, config, test vend",
  },
  {
    command: "console",
    words: "console hash-pin",
    options: {},
    summary: "read a PIN on standard input, print its scrypt hash for console.pinHash",
  },
  {
    command: "console",
    words: "console verify-audit",
    options: CONSOLE_OPTIONS,
    only: ["journal", "config"],
    summary: "check the console audit log's hash chain (read-only); exits 1 on a break",
  },
  {
    command: "keys",
    words: "keys generate",
    options: KEYS_OPTIONS,
    summary: "make a minisign key pair for signing bundles (secret key encrypted; passphrase never in argv)",
  },
  {
    command: "bundle",
    words: "bundle create",
    options: BUNDLE_OPTIONS,
    only: ["config", "release", "version", "targets", "expires", "out"],
    summary: "make an unsigned bundle (config, optional release); prints its trusted comment",
  },
  {
    command: "bundle",
    words: "bundle sign FILE",
    options: BUNDLE_OPTIONS,
    only: ["secret-key", "passphrase-file", "attach"],
    summary: "sign a bundle with a vendd/minisign secret key, or attach a signature made by minisign",
  },
  {
    command: "bundle",
    words: "bundle verify FILE",
    options: BUNDLE_OPTIONS,
    only: ["config", "public-key", "json"],
    summary: "check a bundle's signatures against the config's keys (or a .pub file); prints what it holds",
  },
  {
    command: "bundle",
    words: "bundle apply [FILE]",
    options: BUNDLE_OPTIONS,
    only: ["config", "inbox", "recover", "json"],
    summary: "verify, stage, swap, restart, health-gate, then commit or roll back (vendd-bundle.service)",
  },
  {
    command: "bundle",
    words: "bundle status",
    options: BUNDLE_OPTIONS,
    only: ["config", "json"],
    summary:
      "the high-water mark, an apply in progress and the last outcome (committed, rolled back, refused)",
  },
  {
    command: "bundle",
    words: "bundle pull",
    options: BUNDLE_OPTIONS,
    only: ["config", "json"],
    summary: "fetch the newest bundle from updates.pullUrl (ETag, backoff) and apply it (vendd-pull.timer)",
  },
  {
    command: "fleet",
    words: "fleet serve",
    options: FLEET_SERVER_OPTIONS,
    only: ["config", "db", "listen", "time-zone", "bundle-key", "log-level"],
    summary:
      "the fleet server: unit API, dashboard, plans, invoices, reconciliation and their schedules (--config FILE); flags override the file",
  },
  {
    command: "fleet",
    words: "fleet units",
    options: FLEET_SERVER_OPTIONS,
    only: ["db", "json"],
    summary: "list enrolled units: status, fingerprint, committed seq, last seen, versions",
  },
  {
    command: "fleet",
    words: "fleet approve UNIT",
    options: FLEET_SERVER_OPTIONS,
    only: ["db", "by"],
    summary: "approve a pending unit's enrolment (compare its fingerprint with the unit's first)",
  },
  {
    command: "fleet",
    words: "fleet revoke UNIT",
    options: FLEET_SERVER_OPTIONS,
    only: ["db", "by"],
    summary: "revoke a unit: its requests are refused from now on; its stored events stay",
  },
  {
    command: "fleet",
    words: "fleet bundle upload FILE",
    options: FLEET_SERVER_OPTIONS,
    only: ["db", "bundle-key", "by"],
    summary: "store a signed bundle for units to pull (--bundle-key: refuse unless signed by one of these)",
  },
  {
    command: "fleet",
    words: "fleet enroll",
    options: FLEET_ENROLL_OPTIONS,
    summary:
      "make this unit's fleet key (unless it exists), print its public key and fingerprint; with a URL, enrol",
  },
  {
    command: "fleet",
    words: "fleet user add NAME",
    options: FLEET_USER_OPTIONS,
    only: ["role", "db", "password-file"],
    summary:
      "add a dashboard account (viewer or manager); the password from the file or a prompt, never argv",
  },
  {
    command: "fleet",
    words: "fleet user list",
    options: FLEET_USER_OPTIONS,
    only: ["db", "json"],
    summary: "list the dashboard's accounts and their roles",
  },
  {
    command: "fleet",
    words: "fleet user remove NAME",
    options: FLEET_USER_OPTIONS,
    only: ["db"],
    summary: "remove a dashboard account and end its sessions",
  },
  {
    command: "fleet",
    words: "fleet reconcile",
    options: FLEET_RECONCILE_OPTIONS,
    summary:
      "match the fleet's sales with the payment service's report and transfers; exits 1 on a difference",
  },
  {
    command: "demo",
    words: "demo",
    options: DEMO_OPTIONS,
    summary:
      "run a simulated unit against the local emulator; --chaos SEED is the crash self-check; --fleet three units and a fleet server",
  },
  {
    command: "emulator",
    words: "emulator",
    options: EMULATOR_OPTIONS,
    summary: "run the payment-service emulator",
  },
  {
    command: "sim-vmc",
    words: "sim-vmc",
    options: SIM_VMC_OPTIONS,
    summary: "simulate an MDB cashless adapter and its VMC on a pseudo-terminal",
  },
];

/** `--name VALUE` or `--name`, bracketed unless required. */
export function formatOption(name: string, spec: OptionSpec): string {
  const text = spec.value === undefined ? `--${name}` : `--${name} ${spec.value}`;
  return spec.required ? text : `[${text}]`;
}

const WIDTH = 100;
const INDENT = "  ";
const SUMMARY_INDENT = "      ";

/** The synopsis of one command line, wrapped at 100 columns. */
function synopsis(line: CommandHelp): string[] {
  const parts = Object.entries(line.options)
    .filter(([name]) => name !== "help" && (line.only === undefined || line.only.includes(name)))
    .map(([name, spec]) => formatOption(name, spec));
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

/** The top-level help of `vendd`. */
export function renderUsage(commands: readonly CommandHelp[] = COMMANDS): string {
  const body = commands.flatMap((c) => [...synopsis(c), `${SUMMARY_INDENT}${c.summary}`]);
  return [
    "usage: vendd <command> [options]",
    "",
    "commands:",
    ...body,
    `${INDENT}help`,
    `${SUMMARY_INDENT}this text (also --help, -h); every command takes --help`,
    "",
    "options:",
    `${INDENT}--version, -V     print the version of vendd`,
    "",
  ].join("\n");
}
