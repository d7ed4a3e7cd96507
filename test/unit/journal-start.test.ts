import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { CLI } from "../support/cli.js";
import { journalBytes } from "../support/journalBytes.js";

// Issue 10, defect 4: `vendd run` on a journal it cannot use. Each case: the journal's bytes are unchanged
// afterwards, the output names the path, the cause and the next step, and no request reached the service.

const HAVE_FIU = spawnSync("fiu-run", ["-h"], { stdio: "ignore" }).error === undefined;
const HAVE_SETPRIV = spawnSync("setpriv", ["--help"], { stdio: "ignore" }).error === undefined;
if (!HAVE_FIU) console.warn("journal-start.test.ts: disk-full case skipped (apt-get install fiu-utils)");

let emu: Emulator;
let dir: string;
let journal: string;
let configPath: string;
let secretsPath: string;

beforeAll(async () => {
  emu = await startEmulator({});
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-jstart-"));
  mkdirSync(join(dir, "state"));
  journal = join(dir, "state", "journal.db");
  writeConfig(journal);
});
afterEach(() => {
  chmodSync(join(dir, "state"), 0o755);
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(journalPath: string): void {
  const { v10 } = emu.info;
  configPath = join(dir, "unit.yaml");
  secretsPath = join(dir, "secrets.yaml");
  writeFileSync(
    configPath,
    [
      "unit: { id: vm-9, name: Test unit }",
      `journal: { path: ${journalPath} }`,
      "display: { kind: none }",
      "payment:",
      "  driver: v10",
      "  v10:",
      `    baseUrl: ${v10.baseUrl}`,
      `    tokenUrl: ${v10.tokenUrl}`,
      `    clientId: ${v10.clientId}`,
      `    merchantVat: ${v10.merchantVat}`,
      `    storeId: ${v10.storeId}`,
    ].join("\n"),
    { mode: 0o600 },
  );
  writeFileSync(secretsPath, `v10: { clientSecret: ${v10.clientSecret} }\n`, { mode: 0o600 });
}

/** A journal with `n` sessions, closed cleanly. */
function journalWith(n: number): void {
  const j = openSqliteJournal({ path: journal, unitId: "vm-9", clock: new ManualClock() });
  j.atomically(() => {
    for (let i = 0; i < n; i++) {
      const orderId = j.nextOrderId();
      j.openSession({ id: `s${i}`, orderId, flow: "selection", item: 1, price: 100, driver: "v10" });
      j.closeSession(`s${i}`, "captured", "test");
    }
  });
  j.close();
}

const bytes = (): string => journalBytes(journal);

/**
 * Runs `vendd run` (under `prefix`) until it exits, or until it has said what to do (a daemon may stay up,
 * out of service), then stops it. Returns everything it printed and the requests the service received.
 */
async function run(prefix: string[] = []): Promise<{ out: string; requests: number }> {
  const before = emu.stats().requests;
  const [cmd = process.execPath, ...args] = [
    ...prefix,
    process.execPath,
    CLI,
    "run",
    "--config",
    configPath,
    "--secrets",
    secretsPath,
  ];
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<void>((r) => child.once("close", () => r()));
  const deadline = Date.now() + 20_000;
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    if (out.includes("next step")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 300));
  child.kill("SIGKILL");
  await exited;
  return { out, requests: emu.stats().requests - before };
}

function expectRefused(r: { out: string; requests: number }, cause: string): void {
  expect(r.out).toContain(journal);
  expect(r.out).toContain(`cause:     ${cause}`);
  expect(r.out).toMatch(/next step: \S/);
  expect(r.requests).toBe(0);
}

describe("vendd run refuses a journal it cannot use, leaving it untouched", () => {
  it("corrupted pages", { timeout: 30_000 }, async () => {
    journalWith(400);
    const fd = openSync(journal, "r+");
    writeSync(fd, Buffer.alloc(3 * 4096, 0x5a), 0, 3 * 4096, 4 * 4096);
    closeSync(fd);
    const before = bytes();
    const r = await run();
    expectRefused(r, "corrupt");
    expect(r.out).toContain('"Recovering a unit"');
    expect(bytes()).toBe(before);
  });

  it("a schema newer than this vendd", { timeout: 30_000 }, async () => {
    journalWith(3);
    const raw = new Database(journal);
    raw.pragma("user_version = 42");
    raw.close();
    const before = bytes();
    const r = await run();
    expectRefused(r, "schema newer");
    expect(bytes()).toBe(before);
  });

  it.skipIf(!HAVE_FIU)(
    "a full disk (every positioned write fails with ENOSPC)",
    { timeout: 30_000 },
    async () => {
      journalWith(3);
      const before = bytes();
      const r = await run(["fiu-run", "-x", "-c", "enable name=posix/io/rw/pwrite,failinfo=28"]);
      expectRefused(r, "disk full");
      expect(bytes()).toBe(before);
    },
  );

  it.skipIf(!HAVE_SETPRIV)("a read-only directory", { timeout: 30_000 }, async () => {
    journalWith(3);
    chmodSync(join(dir, "state"), 0o555);
    const before = bytes();
    // Tests run as root, who writes anywhere: the daemon runs without CAP_DAC_OVERRIDE, like a unit's user.
    const r = await run(["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]);
    expectRefused(r, "not writable");
    expect(r.out).toContain(`${join(dir, "state")} is not writable`);
    expect(bytes()).toBe(before);
  });

  it("a journal path under a regular file", { timeout: 30_000 }, async () => {
    writeFileSync(join(dir, "state", "plain"), "not a directory");
    journal = join(dir, "state", "plain", "journal.db");
    writeConfig(journal);
    const r = await run();
    expectRefused(r, "not a directory");
    expect(r.out).toContain(`${join(dir, "state", "plain")} is a file, not a directory`);
  });
});
