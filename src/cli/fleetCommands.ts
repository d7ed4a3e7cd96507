/**
 * The option tables and help lines of `vendd fleet`: the fleet server and its administration, enrolment,
 * dashboard accounts and reconciliation.
 */
import { type CommandHelp, help, helpLines, type OptionSpecs } from "./commandTable.js";

export const FLEET_USER_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  role: { type: "string", value: "viewer|manager", required: true },
  "password-file": { type: "string", value: "FILE" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet backup` (src/cli/fleetBackup.ts). */
export const FLEET_BACKUP_OPTIONS = {
  out: { type: "string", value: "FILE", required: true },
  db: { type: "string", value: "FILE" },
  config: { type: "string", value: "FILE" },
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
  /** The fleet config: its database, reporting settings and time zone (flags win). */
  config: { type: "string", value: "FILE" },
  reporting: { type: "string", value: "FILE" },
  /** Issue 36: the three-way DEX reconciliation instead (src/cli/fleetReconcileDex.ts). */
  dex: { type: "boolean" },
  unit: { type: "string", value: "ID" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet invoice preview|run` (src/cli/fleetInvoice.ts, issue 43). */
export const FLEET_INVOICE_OPTIONS = {
  config: { type: "string", value: "FILE", required: true },
  company: { type: "string", value: "ID", required: true },
  month: { type: "string", value: "YYYY-MM", required: true },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet alerts` (src/cli/fleetAlerts.ts, issue 37). */
export const FLEET_ALERTS_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  open: { type: "boolean" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet alerts silence ...` (src/cli/fleetAlertsSilence.ts, issue 42). */
export const FLEET_ALERTS_SILENCE_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  unit: { type: "string", value: "ID" },
  group: { type: "string", value: "NAME" },
  rule: { type: "string", value: "RULE" },
  maintenance: { type: "boolean" },
  starts: { type: "string", value: "TIME" },
  ends: { type: "string", value: "TIME" },
  for: { type: "string", value: "DURATION" },
  by: { type: "string", value: "NAME" },
  reason: { type: "string", value: "TEXT" },
  all: { type: "boolean" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet alerts ack|unack ID` (src/cli/fleetAlertsSilence.ts, issue 42). */
export const FLEET_ALERTS_ACK_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  by: { type: "string", value: "NAME", required: true },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet dex-g85` (src/cli/fleetDexG85.ts, issue 42). */
export const FLEET_DEX_G85_OPTIONS = {
  unit: { type: "string", value: "ID", required: true },
  by: { type: "string", value: "NAME" },
  reason: { type: "string", value: "TEXT" },
  clear: { type: "boolean" },
  db: { type: "string", value: "FILE|URL" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet rollout ...` (src/cli/fleetRollout.ts, issue 41). */
export const FLEET_ROLLOUT_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  bundle: { type: "string", value: "FILE" },
  "bundle-key": { type: "string", value: "FILE", multiple: true },
  all: { type: "boolean" },
  group: { type: "string", value: "NAME", multiple: true },
  unit: { type: "string", value: "ID", multiple: true },
  canary: { type: "string", value: "N|P%" },
  wave: { type: "string", value: "N|P%" },
  "max-failures": { type: "string", value: "PCT" },
  by: { type: "string", value: "NAME" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet group ...` (src/cli/fleetRollout.ts, issue 41). */
export const FLEET_GROUP_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  json: { type: "boolean" },
  help,
} as const satisfies OptionSpecs;

/** `vendd fleet values ...` (src/cli/fleetRollout.ts, issue 41). */
export const FLEET_VALUES_OPTIONS = {
  config: { type: "string", value: "FILE" },
  db: { type: "string", value: "FILE|URL" },
  unit: { type: "string", value: "ID" },
  group: { type: "string", value: "NAME" },
  by: { type: "string", value: "NAME" },
  json: { type: "boolean" },
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

/** The help lines of these commands, in the order `vendd --help` lists them. */
export const FLEET_COMMANDS: readonly CommandHelp[] = [
  ...helpLines("fleet", FLEET_SERVER_OPTIONS, [
    {
      words: "fleet serve",
      only: ["config", "db", "listen", "time-zone", "bundle-key", "log-level"],
      summary:
        "the fleet server: unit API, dashboard, plans, invoices, reconciliation and their schedules (--config FILE); flags override the file",
    },
    {
      words: "fleet init",
      only: ["config", "db"],
      summary:
        "create and migrate the fleet database (fleet serve does too); the other admin commands never create one",
    },
    {
      words: "fleet doctor",
      only: ["config"],
      summary:
        "tell the payment services the fleet's callback addresses now and print whether each took it (exit 1: one refused)",
    },
    {
      words: "fleet units",
      only: ["config", "db", "json"],
      summary: "list enrolled units: status, fingerprint, committed seq, last seen, versions",
    },
    {
      words: "fleet approve UNIT",
      only: ["config", "db", "by"],
      summary: "approve a pending unit's enrolment (compare its fingerprint with the unit's first)",
    },
    {
      words: "fleet revoke UNIT",
      only: ["config", "db", "by"],
      summary: "revoke a unit: its requests are refused from now on; its stored events stay",
    },
    {
      words: "fleet bundle upload FILE",
      only: ["config", "db", "bundle-key", "by"],
      summary: "store a signed bundle for units to pull (--bundle-key: refuse unless signed by one of these)",
    },
  ]),
  ...helpLines("fleet", FLEET_ROLLOUT_OPTIONS, [
    {
      words: "fleet rollout create",
      only: [
        "bundle",
        "bundle-key",
        "all",
        "group",
        "unit",
        "canary",
        "wave",
        "max-failures",
        "by",
        "config",
        "db",
        "json",
      ],
      summary:
        "upload a signed bundle (--bundle FILE) and roll it out to --all, --group or --unit units: a canary (default 1), then waves (default 25%); halts when more than --max-failures % (default 0) of a phase fail",
    },
    {
      words: "fleet rollout status BUNDLE",
      only: ["config", "db", "json"],
      summary:
        "a rollout's state and phase, and each unit's state (waiting, offered, fetched ... committed, refused, rolledBack) with its reason",
    },
    {
      words: "fleet rollout pause BUNDLE",
      only: ["by", "config", "db"],
      summary: "offer the bundle to no unit until resumed (units that fetched it finish)",
    },
    {
      words: "fleet rollout resume BUNDLE",
      only: ["by", "config", "db"],
      summary: "go on with a paused rollout (a halted one stays halted)",
    },
    {
      words: "fleet rollout abort BUNDLE",
      only: ["by", "config", "db"],
      summary:
        "no further unit takes it; units that applied it keep it (roll back with a new bundle: docs/fleet-managers.md)",
    },
    {
      words: "fleet rollout update-unit BUNDLE UNIT",
      only: ["config", "db"],
      summary: "offer the bundle to this unit at its next heartbeat, whatever its phase",
    },
  ]),
  ...helpLines("fleet", FLEET_GROUP_OPTIONS, [
    {
      words: "fleet group add NAME UNIT...",
      summary:
        "put units in a group (names: lower-case letters, digits, . _ -, 1-63, starting with a letter or digit)",
    },
    { words: "fleet group remove NAME UNIT...", summary: "take units out of a group" },
    { words: "fleet group list", summary: "every group and its units" },
  ]),
  ...helpLines("fleet", FLEET_VALUES_OPTIONS, [
    {
      words: "fleet values set KEY VALUE",
      only: ["config", "db", "unit", "group", "by"],
      summary:
        "hold a config value for one unit (--unit ID) or a group (--group NAME), read by the key's type; never an identity key",
    },
    {
      words: "fleet values unset KEY",
      only: ["config", "db", "unit", "group"],
      summary: "remove a unit's or group's value (back to the layers under it)",
    },
    {
      words: "fleet values list",
      only: ["config", "db", "unit", "group", "json"],
      summary: "the values held (all, or one unit's or group's)",
    },
  ]),
  ...helpLines("fleet", FLEET_ENROLL_OPTIONS, [
    {
      words: "fleet enroll",
      summary:
        "make this unit's fleet key (unless it exists), print its public key and fingerprint; with a URL, enrol",
    },
  ]),
  ...helpLines("fleet", FLEET_USER_OPTIONS, [
    {
      words: "fleet user add NAME",
      only: ["role", "config", "db", "password-file"],
      summary:
        "add a dashboard account (viewer or manager); the password from the file or a prompt, never argv",
    },
    {
      words: "fleet user list",
      only: ["config", "db", "json"],
      summary: "list the dashboard's accounts and their roles",
    },
    {
      words: "fleet user remove NAME",
      only: ["config", "db"],
      summary: "remove a dashboard account and end its sessions",
    },
  ]),
  ...helpLines("fleet", FLEET_ALERTS_OPTIONS, [
    {
      words: "fleet alerts",
      summary:
        "list alerts (open, acknowledged, resolved; --open: only those not resolved) and failing deliveries",
    },
  ]),
  ...helpLines("fleet", FLEET_ALERTS_ACK_OPTIONS, [
    {
      words: "fleet alerts ack ID",
      summary: "acknowledge an open alert (no more re-notifications), as NAME",
    },
    {
      words: "fleet alerts unack ID",
      summary: "take an acknowledgement back: the alert is open again and re-notified",
    },
  ]),
  ...helpLines("fleet", FLEET_ALERTS_SILENCE_OPTIONS, [
    {
      words: "fleet alerts silence add",
      only: [
        "unit",
        "group",
        "rule",
        "maintenance",
        "starts",
        "ends",
        "for",
        "by",
        "reason",
        "json",
        "config",
        "db",
      ],
      required: ["by", "reason"],
      summary:
        "silence alerts of a unit, group and/or rule from now (or a maintenance window from --starts) until --ends or --for: changes are recorded, not sent",
    },
    {
      words: "fleet alerts silence list",
      only: ["all", "json", "config", "db"],
      summary: "list current silences and maintenance windows (--all: with the expired ones)",
    },
    {
      words: "fleet alerts silence edit ID",
      only: ["starts", "ends", "for", "reason", "by", "json", "config", "db"],
      required: ["by"],
      summary: "change a silence's start, end or reason",
    },
    {
      words: "fleet alerts silence end ID",
      only: ["by", "config", "db"],
      required: ["by"],
      summary: "end a silence now (an upcoming maintenance window is cancelled)",
    },
  ]),
  ...helpLines("fleet", FLEET_DEX_G85_OPTIONS, [
    {
      words: "fleet dex-g85",
      summary:
        "mark a unit's machine as one whose DEX G85 check is always wrong (--by, --reason; --clear unmarks): its unverified reads are then used, and the report says so",
    },
  ]),
  ...helpLines("fleet", FLEET_BACKUP_OPTIONS, [
    {
      words: "fleet backup",
      summary: "a consistent copy of a SQLite fleet database while the server runs (docs/fleet-server.md)",
    },
  ]),
  ...helpLines("fleet", FLEET_INVOICE_OPTIONS, [
    {
      words: "fleet invoice preview",
      only: ["config", "company", "month", "json"],
      summary: "one company's invoice of a finished month as the monthly run would make it (nothing sent)",
    },
    {
      words: "fleet invoice run",
      only: ["config", "company", "month"],
      summary: "make and send that invoice now (once: a second run makes no second invoice)",
    },
  ]),
  ...helpLines("fleet", FLEET_RECONCILE_OPTIONS, [
    {
      words: "fleet reconcile",
      only: ["from", "to", "format", "config", "db", "reporting"],
      summary:
        "match the fleet's sales with the payment service's report and transfers; exits 1 on a difference",
    },
    {
      words: "fleet reconcile --dex",
      only: ["from", "to", "unit", "format", "json", "config", "db"],
      summary: "the three-way report: each unit's DEX audits, journal and the service's report (docs/dex.md)",
    },
  ]),
];
