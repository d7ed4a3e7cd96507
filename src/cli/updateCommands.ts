/**
 * The option tables and help lines of the signed-update commands: `vendd keys` (signing keys) and
 * `vendd bundle` (create, sign, verify, apply, status, pull).
 */
import { type CommandHelp, help, helpLines, type OptionSpecs } from "./commandTable.js";

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

/** The help lines of these commands, in the order `vendd --help` lists them. */
export const UPDATE_COMMANDS: readonly CommandHelp[] = [
  ...helpLines("keys", KEYS_OPTIONS, [
    {
      words: "keys generate",
      summary:
        "make a minisign key pair for signing bundles (secret key encrypted; passphrase never in argv)",
    },
  ]),
  ...helpLines("bundle", BUNDLE_OPTIONS, [
    {
      words: "bundle create",
      only: ["config", "release", "version", "targets", "expires", "out"],
      required: ["config", "version", "targets", "expires", "out"],
      summary: "make an unsigned bundle (config, optional release); prints its trusted comment",
    },
    {
      words: "bundle sign FILE",
      only: ["secret-key", "passphrase-file"],
      required: ["secret-key"],
      summary: "sign a bundle with a vendd/minisign secret key (passphrase never in argv)",
    },
    {
      words: "bundle sign FILE",
      only: ["attach"],
      required: ["attach"],
      summary: "or attach a signature made by minisign (see `vendd bundle --help`)",
    },
    {
      words: "bundle verify FILE",
      only: ["config", "public-key", "json"],
      summary:
        "check a bundle's signatures against the config's keys, or a .pub file's (--public-key); prints what it holds",
    },
    {
      words: "bundle apply [FILE]",
      only: ["config", "inbox", "recover", "json"],
      summary: "verify, stage, swap, restart, health-gate, then commit or roll back (vendd-bundle.service)",
    },
    {
      words: "bundle status",
      only: ["config", "json"],
      summary:
        "the high-water mark, an apply in progress and the last outcome (committed, rolled back, refused)",
    },
    {
      words: "bundle pull",
      only: ["config", "json"],
      summary:
        "fetch the newest bundle (signed GET, ETag, backoff) from the fleet, <fleet.url>/api/unit/v1/bundle, or from updates.pullUrl when set, and apply it (vendd-pull.timer)",
    },
  ]),
];
