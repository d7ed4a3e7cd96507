/**
 * Issue 43: and every command a role manual tells a user to run in a fenced block is RUN, as a process,
 * against a scratch set-up (see "run as written" below), its exit and output checked for errors.
 *
 * Issue 32, defect 7: every `vendd ...` command line in README.md and docs/**\/*.md parses with the CLI's own
 * option tables (src/cli/commands.ts, the tables `vendd --help` is rendered from), so the docs cannot name
 * an option or a subcommand that does not exist. A line that does not parse fails the test naming its file
 * and line. New doc files are picked up as they appear (the folder is walked).
 *
 * Command lines are those in fenced code blocks (after `$ `, `sudo ` or environment assignments) and inline
 * code spans that start with `vendd `; a synopsis (with `[`, `<`, `|` or `...`) is not a command line.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import type { CommandHelp } from "../../src/cli/commandTable.js";
import { systemClock } from "../../src/core/clock.js";
import { generateUnitKey, signRequest } from "../../src/core/fleetAuth.js";
import { UNIT_API } from "../../src/core/fleetWire.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { makeKey, signedBundle } from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";
import { serveFleet } from "../support/fleetServe.js";

const ROOT = process.cwd();

function docFiles(): string[] {
  const out = [join(ROOT, "README.md")];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith(".md")) out.push(join(dir, e.name));
    }
  };
  walk(join(ROOT, "docs"));
  return out;
}

interface DocLine {
  file: string;
  line: number;
  text: string;
}

/** The `vendd ...` command lines of a Markdown text. */
function commandLines(file: string, text: string): DocLine[] {
  const out: DocLine[] = [];
  let fenced = false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] ?? "";
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      const start = i;
      while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i] ?? ""}`;
      const cmd = line
        .replace(/\s#.*$/, "")
        .trim()
        .replace(/^\$\s+/, "")
        .replace(/^sudo\s+(-u\s+\S+\s+)?/, "")
        .replace(/^([A-Z_][A-Z0-9_]*=\S*\s+)+/, "");
      if (/^vendd\s/.test(cmd)) out.push({ file, line: start + 1, text: cmd });
      continue;
    }
    for (const m of line.matchAll(/`(vendd [^`]+)`/g)) out.push({ file, line: i + 1, text: m[1] ?? "" });
  }
  return out.filter((l) => !/[[\]<>|…]|\.\.\./.test(l.text));
}

/** Splits a command line like a POSIX shell would (quotes, no expansion). */
function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
  return out;
}

/** The literal words of a help line (`fleet user add NAME` → fleet, user, add). */
function fixed(c: CommandHelp): string[] {
  const out: string[] = [];
  for (const w of c.words.split(" ")) {
    if (!/^[a-z][a-z-]*$/.test(w)) break;
    out.push(w);
  }
  return out;
}

/** Why `text` does not parse, or null when it does. */
function refusal(text: string): string | null {
  const args = words(text).slice(1);
  // The top level: its help and version (src/cli/main.ts).
  if (args.length === 1 && ["--help", "-h", "help", "--version", "-V", "version"].includes(args[0] ?? ""))
    return null;
  const candidates = COMMANDS.map((c) => ({ c, f: fixed(c) }))
    .filter(({ f }) => f.every((w, i) => args[i] === w))
    .sort((a, b) => b.f.length - a.f.length);
  const best = candidates[0];
  if (best === undefined) return `no command '${args.slice(0, 2).join(" ")}'`;
  // A command may have several help lines over one table (fleet serve, units...): any that parses will do.
  const tables = candidates.filter((x) => x.f.length === best.f.length);
  let why = "";
  for (const { c, f } of tables) {
    try {
      parseArgs({ args: args.slice(f.length), options: c.options, strict: true, allowPositionals: true });
      return null;
    } catch (err) {
      why = err instanceof Error ? err.message : String(err);
    }
  }
  return why;
}

describe("every vendd command line in README.md and docs/ parses with the CLI's option tables", () => {
  const files = docFiles();

  it("finds the command lines (README and the role manuals have some)", () => {
    const all = files.flatMap((f) => commandLines(f, readFileSync(f, "utf8")));
    expect(all.length).toBeGreaterThan(20);
  });

  it("the checker refuses an unknown option and an unknown command", () => {
    expect(refusal("vendd fleet serve --no-such-option")).toMatch(/no-such-option/);
    expect(refusal("vendd frobnicate")).toMatch(/no command/);
    expect(refusal("vendd fleet user add mia --role manager --db fleet.db")).toBeNull();
  });

  for (const file of files) {
    it(relative(ROOT, file), () => {
      const bad = commandLines(file, readFileSync(file, "utf8"))
        .map((l) => ({ l, why: refusal(l.text) }))
        .filter((x) => x.why !== null)
        .map(({ l, why }) => `${relative(ROOT, l.file)}:${l.line}: ${l.text}: ${why}`);
      expect(bad).toEqual([]);
    });
  }
});

/*
 * Run as written (issue 43). The role manuals' fenced blocks, one block after another, each command as a
 * process in a scratch set-up that stands in for the unit: `/etc/vendd/` and `/var/lib/vendd/` are a
 * scratch directory holding a valid unit config (sim machine, the payment-service emulator), its
 * secrets and a journal; `~` is a scratch home; any other `NAME.yaml` a command names is a copy of that
 * config; a command that takes `--config` and gives none reads the scratch config (it stands in for the
 * default /etc/vendd/config.yaml); `echo X | vendd ...` gets X on standard input. Each must exit 0 within
 * RUN_MS with no error text. Rules, not a list of lines, say what is only parsed, each with its reason
 * (NOT_RUN): a later line that matches one falls in by itself; a command after a step not run that makes
 * the next steps' input (FEEDS: keys, bundles) in the same block is not run either. Commands run in the
 * scratch directory, so what they write lands there.
 */
const ROLE_MANUALS = [
  "docs/operators.md",
  "docs/technicians.md",
  "docs/fleet-managers.md",
  "docs/fleet-server.md",
  "docs/console-test-vend.md",
  "docs/dex.md",
  "docs/alerts.md",
  "docs/reconciliation.md",
  "docs/board.md",
  "docs/invoices.md",
];
const RUN_MS = 20_000;

/** Commands only parsed, by rule, with the reason (and where they are run instead). */
const NOT_RUN: readonly [RegExp, string][] = [
  [/[[\]<>|…]|\.\.\./, "a synopsis, not a command line"],
  [
    /^vendd (run|emulator|sim-vmc|sim-dex|fleet serve)\b/,
    "a long-running server (test/unit, test/fleet start it)",
  ],
  [
    /^vendd console(?! (hash-pin|verify-audit))/,
    "interactive on a terminal (test/console drives it over a PTY)",
  ],
  [/^vendd screen\b/, "asks a running daemon over its control socket (test/cli/screen-daemon.test.ts)"],
  [/^vendd demo\b/, "a whole demo, tens of seconds to minutes (test/demo runs it)"],
  [/^vendd doctor\b/, "checks the unit's own devices and payment service (test/cli/doctor-cli.test.ts)"],
  [
    /^vendd fleet doctor\b/,
    "talks to the payment services a fleet config names (test/fleet/callback-refused.test.ts)",
  ],
  [
    /^vendd fleet alerts (silence|ack|unack)\b/,
    "acts on an alerting fleet's alerts by id (test/fleet/alerts-routing-pg.test.ts runs each on a real fleet)",
  ],
  [
    /^vendd fleet (revoke|dex-g85|invoice)\b/,
    "takes a unit out of the fleet, flags its audits or makes invoices: test/fleet runs each on a real fleet",
  ],
  [
    /^vendd keys generate\b(?!.*--passphrase-file)/,
    "derives the key with scrypt over 1 GiB, a minute of CPU on a shared runner (test/update/bundle-cli.test.ts); the scratch fleet has a signed bundle of its own instead",
  ],
  [
    /^vendd bundle sign\b(?!.*--passphrase-file)/,
    "needs the key made by the keys generate above (test/update/bundle-cli.test.ts)",
  ],
  [
    /^vendd (fleet )?reconcile\b/,
    "needs the payment service's reporting API settings and its sales (test/unit/reconcile-unit-cli.test.ts, test/fleet/reconcile-cli.test.ts)",
  ],
  [/^vendd bundle apply\b/, "root: swaps the release and config (test/update)"],
  [
    /^vendd (journal held .*--cancel|fleet (user|backup|restore|migrate)\b)/,
    "changes a real unit's or fleet's data (test/unit, test/fleet)",
  ],
];

/** Steps whose output a later step of the same block reads (keys, a signed bundle). */
const FEEDS = /^vendd (keys generate|bundle (create|sign))\b/;

interface Runnable {
  file: string;
  line: number;
  block: number;
  text: string;
  stdin?: string;
}

/** The fenced command lines of a role manual, with their block number and piped input. */
function blockCommands(file: string, text: string): Runnable[] {
  const out: Runnable[] = [];
  let fenced = false;
  let block = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] ?? "";
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      block++;
      continue;
    }
    if (!fenced) continue;
    const start = i;
    while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i] ?? ""}`;
    let cmd = line
      .replace(/\s#.*$/, "")
      .trim()
      .replace(/^\$\s+/, "")
      .replace(/^sudo\s+(-u\s+\S+\s+)?/, "");
    const piped = /^echo\s+(\S+)\s*\|\s*(vendd\s.*)$/.exec(cmd);
    if (piped !== null) cmd = piped[2] ?? "";
    if (/^vendd\s/.test(cmd))
      out.push({
        file,
        line: start + 1,
        block,
        text: cmd,
        ...(piped === null ? {} : { stdin: `${piped[1]}\n` }),
      });
  }
  return out;
}

/** The scratch fleet's signed bundle: the id the fleet manager's rollout commands name. */
const DOC_BUNDLE_ID = "5e1b8c403f9c2a7d";

/** A running scratch fleet: its config (SQLite in the scratch directory), address and server process. */
interface ScratchFleet {
  config: string;
  url: string;
  stop(): Promise<void>;
}

/**
 * A scratch fleet for a manual that runs `vendd fleet` commands: `fleet init` on a SQLite file, `fleet
 * serve` on loopback, units vm-0001 (pending: the manual approves it), vm-0002 and vm-0003 (approved)
 * enrolled through the real API, and `fleet-a-13.vbundle` signed with the key the config's bundleKeys
 * names (the manual's own `keys generate` is parsed only, see NOT_RUN).
 */
async function scratchFleet(dir: string): Promise<ScratchFleet> {
  const key = await makeKey();
  const pub = join(dir, "bundle-key.pub");
  writeFileSync(pub, key.publicKeyText);
  const config = join(dir, "fleet.yaml");
  writeFileSync(
    config,
    `db: ${join(dir, "fleet.db")}\nlisten: 127.0.0.1:0\nlogLevel: warn\nbundleKeys: [${pub}]\n`,
  );
  const init = await vendd(["fleet", "init", "--config", config]);
  expect(init.code, init.stderr).toBe(0);
  const served = await serveFleet(config);
  const url = served.url;
  for (const id of ["vm-0001", "vm-0002", "vm-0003"]) {
    const path = `${UNIT_API}/enroll`;
    const body = JSON.stringify({ unitId: id, label: `docs ${id}` });
    const headers = signRequest(generateUnitKey(), "POST", path, body, Date.now());
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      body,
      headers: { ...headers, "content-type": "application/json" },
    });
    expect(res.status).toBe(202);
    if (id !== "vm-0001") expect((await vendd(["fleet", "approve", id, "--config", config])).code).toBe(0);
  }
  writeFileSync(
    join(dir, "fleet-a-13.vbundle"),
    signedBundle([key], {
      id: DOC_BUNDLE_ID,
      version: 13,
      targets: ["fleet-a", "vm-0001", "vm-0002", "vm-0003"],
      configText: 'engine: { maxPrice: "3.00" }\n',
    }),
  );
  return {
    config,
    url,
    stop: () => served.stop(),
  };
}

/** A scratch unit: /etc/vendd and /var/lib/vendd stand-ins, a home; with a scratch fleet, its link. */
function scratch(
  emu: Emulator,
  dir: string = mkdtempSync(join(tmpdir(), "vendd-docrun-")),
  fleet?: ScratchFleet,
): { dir: string; rewrite(text: string): string[] } {
  const etc = join(dir, "etc");
  const home = join(dir, "home");
  mkdirSync(etc);
  mkdirSync(home);
  const journal = join(dir, "journal.db");
  const config = [
    "unit: { id: vm-doc, name: Docs unit }",
    `journal: { path: ${journal} }`,
    "display: { kind: none }",
    "payment:",
    "  driver: v10",
    "  v10:",
    `    baseUrl: ${emu.info.v10.baseUrl}`,
    `    tokenUrl: ${emu.info.v10.tokenUrl}`,
    "    clientId: docs-client",
    `    merchantVat: ${emu.info.v10.merchantVat}`,
    `    storeId: ${emu.info.v10.storeId}`,
    "updates:",
    `  inbox: ${join(dir, "inbox")}`,
    `  stateDir: ${join(dir, "updates")}`,
    `  releaseRoot: ${join(dir, "release")}`,
    ...(fleet === undefined ? [] : [`fleet: { url: "${fleet.url}", keyFile: ${join(dir, "fleet.key")} }`]),
  ].join("\n");
  for (const name of ["config.yaml", "vendd.yaml"]) writeFileSync(join(etc, name), config, { mode: 0o640 });
  writeFileSync(join(etc, "secrets.yaml"), "v10: { clientSecret: docs-secret }\n", { mode: 0o600 });
  openSqliteJournal({
    path: journal,
    unitId: "vm-doc",
    clock: systemClock,
    outbox: { currency: "DKK" },
  }).close();
  return {
    dir,
    rewrite(text) {
      const args = words(text)
        .slice(1)
        .map((w) =>
          w
            .replace(/^\/etc\/vendd(-fleet)?\/fleet\.yaml$/, fleet?.config ?? "$&")
            .replace(/^\/etc\/vendd\//, `${etc}/`)
            .replace(/^\/var\/lib\/vendd\/journal\.db$/, journal)
            .replace(/^~\//, `${home}/`),
        )
        .map((w) => {
          if (!/^[\w.-]+\.yaml$/.test(w) || w.startsWith("/")) return w;
          const copy = join(dir, w);
          writeFileSync(copy, config, { mode: 0o640 });
          return copy;
        });
      const candidates = COMMANDS.map((c) => ({ c, f: fixed(c) }))
        .filter(({ f }) => f.every((w, i) => args[i] === w))
        .sort((a, b) => b.f.length - a.f.length);
      const takesConfig =
        candidates[0]?.c.options !== undefined && "config" in (candidates[0]?.c.options ?? {});
      if (takesConfig && !args.includes("--config") && !args.includes("--journal"))
        args.push("--config", join(etc, "config.yaml"));
      return args;
    },
  };
}

/** Text that says a command failed, in its output. */
const ERROR_TEXT = /\b(error|Error|refused|invalid|cannot|not found|unknown option|Unknown)\b|\n\s+at /;

describe("every command a role manual tells a user to run, run as written in a scratch set-up", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({
      seed: { integrators: [{ clientId: "docs-client", clientSecret: "docs-secret" }] },
    });
  });
  afterAll(async () => {
    await emu?.close();
  });
  const runs = ROLE_MANUALS.filter((f) => {
    try {
      readFileSync(join(ROOT, f));
      return true;
    } catch {
      return false;
    }
  }).map((f) => ({ file: f, commands: blockCommands(f, readFileSync(join(ROOT, f), "utf8")) }));

  it("classifies by rule: a server and a synopsis are parsed only, a plain command is run", () => {
    const reason = (t: string) => NOT_RUN.find(([re]) => re.test(t))?.[1] ?? null;
    expect(reason("vendd run --config unit.yaml")).toMatch(/long-running/);
    expect(reason("vendd fleet reconcile --from A [--unit ID]")).toMatch(/synopsis/);
    expect(reason("vendd console hash-pin")).toBeNull();
    expect(reason("vendd config validate /etc/vendd/config.yaml")).toBeNull();
    const all = runs.flatMap((r) => r.commands);
    expect(all.length).toBeGreaterThan(10);
    // Some are run, not only parsed (config validate, journal held, console hash-pin, bundle status ...).
    expect(all.filter((c) => reason(c.text) === null).length).toBeGreaterThanOrEqual(5);
  });

  for (const { file, commands } of runs) {
    it(`${file}: runs its commands`, { timeout: 120_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), "vendd-docrun-"));
      const needsFleet = commands.some(
        (c) => /^vendd fleet /.test(c.text) && NOT_RUN.every(([re]) => !re.test(c.text)),
      );
      const fleet = needsFleet ? await scratchFleet(dir) : undefined;
      const s = scratch(emu, dir, fleet);
      try {
        const failures: string[] = [];
        const ran: string[] = [];
        let skippedBlock = -1;
        for (const c of commands) {
          const rule = NOT_RUN.find(([re]) => re.test(c.text));
          if (rule !== undefined || c.block === skippedBlock) {
            // Only a step that makes a later one's input holds the rest of its block back.
            if (rule !== undefined && FEEDS.test(c.text)) skippedBlock = c.block;
            continue;
          }
          const args = s.rewrite(c.text);
          ran.push(c.text);
          const r = await vendd(args, {
            env: { HOME: join(s.dir, "home"), TZ: "UTC" },
            timeoutMs: RUN_MS,
            cwd: s.dir,
            ...(c.stdin === undefined ? {} : { input: c.stdin }),
          });
          const text = `${r.stdout}\n${r.stderr}`;
          if (r.code !== 0 || ERROR_TEXT.test(text))
            failures.push(`${c.file}:${c.line}: ${c.text}: exit ${r.code}\n${text.slice(0, 800)}`);
        }
        expect(failures).toEqual([]);
        if (ran.length > 0) process.stdout.write(`${file}: ran ${ran.length}: ${ran.join("; ")}\n`);
      } finally {
        await fleet?.stop();
        rmSync(s.dir, { recursive: true, force: true });
      }
    });
  }
});
