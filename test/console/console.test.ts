/**
 * The technician console over a real PTY (socat), driven as a technician would, against the built daemon
 * (`vendd run`) talking to the payment-service emulator. Needs socat (CI installs it).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CLI, vendd } from "../support/cli.js";
import { CANARY_PIN, CANARY_SECRET, PtyConsole, Supervised, writeUnit } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

if (!HAVE_SOCAT)
  process.stderr.write("console PTY tests skipped: socat is not installed (apt-get install socat)\n");

let dir: string;
let emu: Emulator;
let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => {});

async function unit(extra: string[] = []) {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), "vendd-console-"));
  emu = await startEmulator({
    pollDelayMs: 50,
    seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
  });
  const files = writeUnit(dir, emu, pinHash, extra);
  const daemon = new Supervised(
    ["run", "--config", files.config, "--secrets", files.secrets],
    join(dir, "daemon.pid"),
  );
  cleanups.push(() => daemon.stop());
  await daemon.waitRuns(1, "unit in service");
  return { ...files, daemon, socket: join(dir, "control.sock") };
}

function openConsole(socket: string, idleSeconds = 300, columns?: number): PtyConsole {
  const c = PtyConsole.start(socket, idleSeconds, columns);
  cleanups.push(() => c.stop("SIGKILL"));
  return c;
}

async function loggedIn(socket: string, idleSeconds = 300): Promise<PtyConsole> {
  const c = openConsole(socket, idleSeconds);
  await c.waitFor("PIN or badge: ");
  await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
  return c;
}

describe.skipIf(!HAVE_SOCAT)("vendd console over a PTY", () => {
  it("logs in, refuses a wrong PIN, runs every command, applies a valid config and refuses an invalid one", async () => {
    const u = await unit();
    const c = openConsole(u.socket);
    await c.waitFor("PIN or badge: ");
    await c.line("1234", "wrong PIN or unknown badge");
    await c.line(CANARY_PIN, "logged in");
    await c.line("help", "test-vend [AMOUNT]");
    await c.line("help config", "config show|diff|set KEY VALUE|apply|discard");
    await c.line("status", /audit log: intact[\s\S]*vendd> /);
    await c.line("sales", /no sales|sales /);
    await c.line("sales --from 2020-01-01 --to 2020-01-31", "no sales 2020-01-01..2020-01-31");
    await c.line("journal", /no sessions|ORDER/);
    await c.line("journal unresolved", /no unresolved sessions/);
    await c.line("journal vm-c-1-1", /no session/);
    await c.line("errors", /vendd> /);
    await c.line("logs", /control socket listening/);
    const follow = c.mark();
    c.type("logs --follow\r");
    await c.waitFor("(following; press Enter to stop)", follow);
    c.type("\r");
    await c.waitFor("vendd> ", follow + 10);
    await c.line("service out Restocking", "out of service: Restocking");
    await c.line("status", /OUT OF SERVICE[\s\S]*service mode Restocking/);
    await c.line("service in", "back in service");
    await c.line("status", /IN SERVICE/);
    await c.line("config show", "console.pinHash = (set)");
    // Invalid: refused with every error by path, nothing staged, the file unchanged.
    const before = readFileSync(u.config, "utf8");
    const bad = await c.line("config set engine.paymentTimeoutMs 5", /not staged[\s\S]*vendd> /);
    expect(bad).toContain("engine.paymentTimeoutMs: must be at least 1000");
    const bad2 = await c.line("config set vmc.driver mdb-adapter", /not staged[\s\S]*vendd> /);
    expect(bad2).toContain("vmc.device: required when vmc.driver is mdb-adapter");
    await c.line("config set nosuch.key 1", "nosuch");
    await c.line("config diff", "nothing staged");
    await c.line("config apply", "nothing staged");
    expect(readFileSync(u.config, "utf8")).toBe(before);
    // Valid: staged, shown, discarded, staged again, applied; the daemon restarts and commits it.
    await c.line("config set unit.name Renamed unit", "staged:");
    await c.line("config diff", 'unit.name: "Console unit" -> "Renamed unit"');
    await c.line("config discard", "discarded 1");
    await c.line("config set console.testVendAmount 2.50", "staged:");
    await c.line("config set updates.fleet north", /only a signed bundle|not staged/);
    await c.line("config apply", "handed to the update applier");
    expect(readFileSync(u.config, "utf8")).toBe(before);
    // The root applier (vendd-bundle.path runs it on the inbox) swaps it in, restarts, gates, commits.
    const applier = await vendd(["bundle", "apply", "--inbox", join(dir, "inbox"), "--config", u.config], {
      timeoutMs: 60_000,
    });
    expect(applier.stderr + applier.stdout).toContain("committed");
    expect(applier.code).toBe(0);
    expect(u.daemon.runs).toBe(2);
    expect(readFileSync(u.config, "utf8")).toContain("# the test unit");
    expect(readFileSync(u.config, "utf8")).toMatch(/testVendAmount: "?2\.50/);
    await c.waitFor("connection to the daemon lost", 0);
    await c.line(CANARY_PIN, "logged in");
    await c.line("status", /last update: committed: config local-/);
    await c.line("restart", "restarting the daemon");
    await u.daemon.waitRuns(3, "unit in service");
    await c.waitFor("PIN or badge:", c.mark() - 200);
    await c.line(CANARY_PIN, "logged in");
    await c.line("logout", "logged out");
    const end = c.mark();
    c.type("\x04");
    await c.waitFor("bye", end);
    expect(await c.closed).toBe(0);
    // The audit log has it all, chain intact, no secret and no PIN anywhere.
    const verify = spawnSync(process.execPath, [
      CLI,
      "console",
      "verify-audit",
      "--journal",
      join(dir, "journal.db"),
    ]);
    expect(verify.stdout.toString()).toContain("audit log intact");
    expect(verify.status).toBe(0);
    const db = new Database(join(dir, "journal.db"), { readonly: true });
    const rows = db.prepare("SELECT who, command, outcome FROM console_audit ORDER BY id").all();
    db.close();
    const audit = rows.map((r) => Object.values(r as object).join("|")).join("\n");
    expect(audit).toContain('config set console.testVendAmount = "2.50"');
    expect(audit).toMatch(
      /applier \(console:console-\d+\.yaml\)\|update config local-\S+ version \d+\|committed/,
    );
    expect(audit).toContain("PIN|service out Restocking|ok");
    expect(audit).toContain("-|login|failed");
    for (const text of [c.out, u.daemon.all, audit, readFileSync(u.config, "utf8")]) {
      expect(text).not.toContain(CANARY_SECRET);
      expect(text).not.toContain(CANARY_PIN);
    }
  }, 90_000);

  it("keeps the lockout across a daemon restart and a console restart", async () => {
    const u = await unit();
    let c = openConsole(u.socket);
    await c.waitFor("PIN or badge: ");
    for (let i = 0; i < 4; i++) await c.line(`000${i}`, "wrong PIN or unknown badge");
    await c.line("00009", "locked for 30 s");
    await c.stop("SIGKILL");
    // Restart the daemon (systemd would) and the console: the right PIN is still refused.
    await u.daemon.stop();
    const again = new Supervised(
      ["run", "--config", u.config, "--secrets", u.secrets],
      join(dir, "daemon.pid"),
    );
    cleanups.push(() => again.stop());
    await again.waitRuns(1, "unit in service");
    c = openConsole(u.socket);
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /too many failed logins: try again in \d+ s/);
    expect(c.out).not.toContain("logged in");
  }, 60_000);

  it("logs out after idle time", async () => {
    const u = await unit();
    const c = await loggedIn(u.socket, 2);
    await c.waitFor("logged out after idle time", 0, 6000);
    await c.line("status", "PIN or badge:");
    expect(c.out).toContain("wrong PIN");
  }, 40_000);

  it("runs a test vend that ends captured in the emulator's ledger", async () => {
    const u = await unit();
    const c = await loggedIn(u.socket);
    const status = await c.line("status", /IN SERVICE[\s\S]*vendd> /);
    expect(status).toContain("engine idle");
    const beacon = await beaconOf(u.socket);
    // The technician reads the beacon id to check in on from `status` (docs/console-test-vend.md).
    expect(status).toContain(`check-in beacon id ${beacon}`);
    const phone = emu.info.users[0]?.phone ?? "";
    const m = c.mark();
    c.type("test-vend 3.25\r");
    await c.waitFor("QR shown on the unit", m);
    // The customer (the emulator's user simulation) checks in on the QR and accepts.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      emu.userSimulation.checkin(beacon, phone);
      const r = emu.userSimulation.accept(beacon, phone);
      if (r.status < 300) break;
      await new Promise((r2) => setTimeout(r2, 100));
    }
    const done = await c.waitFor(/test vend (\S+): captured 3\.25/, m, 30_000);
    const orderId = /test vend (\S+): captured/.exec(done)?.[1] ?? "";
    const ledger = emu.ledger().filter((e) => e.orderId === orderId);
    expect(ledger.map((e) => [e.kind, e.amount])).toContainEqual(["captured", 325]);
    await c.line("sales", /total\s+1\s+3\.25/);
  }, 60_000);

  it("fits a wide terminal, audits help and refused lines, stages one value per key by its type, and Ctrl-D ends cleanly", async () => {
    const u = await unit();
    const c = openConsole(u.socket, 300, 132);
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    // 132 columns: help's long lines are whole (80 columns cut them with ~).
    const help = await c.line("help", /this list, or one command's usage[\s\S]*vendd> /);
    expect(help).toContain("unit, VMC link, payment service, beacon, service mode, last vends, unresolved");
    // test-vend 0 is refused before anything waits.
    const zero = await c.line("test-vend 0", /above 0[\s\S]*vendd> /);
    expect(zero).not.toContain("waiting");
    await c.line("nosuchcmd", /unknown command: nosuchcmd[\s\S]*vendd> /);
    // One staged value per key; values read by the key's type (text stays text, quotes always dropped).
    await c.line("config set unit.name 9999", /staged:\s+unit\.name = "9999"/);
    const again = await c.line('config set unit.name "12.00"', /staged:[\s\S]*vendd> /);
    expect(again).toContain('unit.name = "12.00"');
    expect(again).not.toContain("9999");
    await c.line("config set console.idleTimeoutMinutes 10", "console.idleTimeoutMinutes = 10");
    const diff = await c.line("config diff", /idleTimeoutMinutes[\s\S]*vendd> /);
    expect(diff).toContain('unit.name: "Console unit" -> "12.00"');
    expect(diff.match(/unit\.name:/g)).toHaveLength(1);
    await c.line("config discard", "discarded 2 staged change(s)");
    // Removing the PIN is shown as a removal, never as "(hidden) -> (hidden)".
    await c.line("config set console.pinHash null", "console.pinHash = null (removed: PIN login off)");
    await c.line("config diff", "console.pinHash: (set, hidden) -> (none)");
    await c.line("config set console.idleTimeoutMinutes ten", "console.idleTimeoutMinutes is a number");
    await c.line("config discard", "discarded 1 staged change(s)");
    // Ctrl-D: logged out, bye, and no word of a lost daemon.
    const end = c.mark();
    c.type("\x04");
    await c.waitFor("bye", end);
    expect(await c.closed).toBe(0);
    expect(c.out.slice(end)).not.toContain("connection to the daemon lost");
    const db = new Database(join(dir, "journal.db"), { readonly: true });
    const rows = db.prepare("SELECT who, command, outcome FROM console_audit ORDER BY id").all();
    db.close();
    const audit = rows.map((r) => Object.values(r as object).join("|")).join("\n");
    expect(audit).toContain("PIN|help|ok");
    expect(audit).toMatch(/PIN\|test-vend 0 \(refused: usage\)\|badArgs/);
    expect(audit).toMatch(/PIN\|nosuchcmd \(refused: usage\)\|badArgs/);
    expect(audit).toContain("PIN|config set console.pinHash = null (removed: PIN login off)|ok");
    expect(audit).toContain("PIN|logout|ok");
    expect(audit).not.toContain(CANARY_PIN);
  }, 60_000);

  it("cancels a test vend on Ctrl-C: the payment cancelled at the service, the prompt answering at once", async () => {
    const u = await unit();
    const c = await loggedIn(u.socket);
    const beacon = await beaconOf(u.socket);
    const phone = emu.info.users[0]?.phone ?? "";
    const m = c.mark();
    c.type("test-vend 4.75\r");
    await c.waitFor("QR shown on the unit", m);
    // The unit does not learn that the customer accepted (its status reads fail), so the payment stays
    // reserved at the service while the test vend waits.
    emu.faults.add({ method: "GET", path: "/v10/payments/*", fault: "500", count: 1_000_000 });
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      emu.userSimulation.checkin(beacon, phone);
      const r = emu.userSimulation.accept(beacon, phone);
      if (r.status < 300) break;
      await new Promise((r2) => setTimeout(r2, 100));
    }
    const reserved = () => emu.ledger().some((e) => e.kind === "reserved" && e.amount === 475);
    while (!reserved() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(reserved()).toBe(true);
    const cancelAt = Date.now();
    const k = c.mark();
    c.type("\x03");
    const done = await c.waitFor(/test vend (\S+): cancelled 4\.75[\s\S]*vendd> /, k, 10_000);
    expect(done).toContain("cancelling the test vend");
    emu.faults.clear();
    await c.line("status", /IN SERVICE[\s\S]*vendd> /, 5000);
    expect(Date.now() - cancelAt).toBeLessThan(5000);
    expect(c.out.slice(k)).not.toContain("dropped");
    const orderId = /test vend (\S+): cancelled/.exec(done)?.[1] ?? "";
    const ledger = emu.ledger().filter((e) => e.orderId === orderId);
    expect(ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 475],
      ["cancelled", 475],
    ]);
  }, 60_000);

  it("survives junk: binary, NUL, 10 KB lines, ANSI escapes, a 10,000-line flood, Ctrl-C/Ctrl-D at every prompt", async () => {
    const u = await unit();
    // Ctrl-C and junk at the PIN prompt, then Ctrl-D there ends the console cleanly.
    let c = openConsole(u.socket);
    await c.waitFor("PIN or badge: ");
    c.type("\x03");
    await c.waitFor("^C", 0);
    c.type(`${"7".repeat(10_000)}\r`);
    await c.waitFor("line too long", 0);
    let m = c.mark();
    c.type("\x04");
    await c.waitFor("bye", m);
    expect(await c.closed).toBe(0);
    c = await loggedIn(u.socket);
    const junk = Buffer.concat([
      Buffer.from([0, 1, 2, 0xff, 0xfe, 0x00, 0x1b]),
      Buffer.from("[31mstatus\x1b[0m\r"),
      Buffer.from(`${"x".repeat(10_240)}\r`),
      Buffer.from("st\x00at\x00us\r"),
      Buffer.from("\x1b[A\x1b[B\x1b[2J\x1b]0;title\x07help\r"),
    ]);
    c.type(junk);
    await c.waitFor("line too long", 0);
    await c.line("status", /IN SERVICE/);
    c.type("\x03");
    await c.line("", "vendd> ");
    // A flood of 10,000 lines: dropped past a small queue, the console stays usable.
    c.type("errors\r".repeat(10_000));
    await new Promise((r) => setTimeout(r, 1500));
    await c.line("status", /IN SERVICE/, 30_000);
    m = c.mark();
    c.type("\x04");
    await c.waitFor("bye", m);
    // A raw socket client that sends garbage, and one that never reads.
    await new Promise<void>((resolve) => {
      const s = createConnection(u.socket);
      s.on("error", () => {});
      s.on("connect", () => {
        s.write(Buffer.from([0xde, 0xad, 0x0a, 0x00, 0x0a]));
        s.write(`${"{".repeat(70_000)}\n`);
        s.end();
        resolve();
      });
    });
    const quiet = createConnection(u.socket);
    quiet.pause();
    quiet.on("error", () => {});
    quiet.write('{"v":1,"id":1,"cmd":"help"}\n'.repeat(20_000));
    await new Promise((r) => setTimeout(r, 1000));
    quiet.destroy();
    // Still alive and in service; nothing was staged or changed.
    c = await loggedIn(u.socket);
    await c.line("status", /IN SERVICE[\s\S]*config version 0/);
    expect(u.daemon.runs).toBe(1);
    expect(u.daemon.current.code).toBeUndefined();
    expect(u.daemon.all).not.toContain(CANARY_PIN);
    expect(u.daemon.all).not.toContain(CANARY_SECRET);
  }, 90_000);
});

async function beaconOf(socket: string): Promise<string> {
  const { ControlClient } = await import("../../src/core/controlClient.js");
  const client = await ControlClient.connect(socket);
  try {
    await client.request("login", { secret: CANARY_PIN });
    const s = (await client.request("status")) as { beaconId?: unknown };
    if (typeof s.beaconId !== "string") throw new Error("no beacon id in status");
    return s.beaconId;
  } finally {
    client.close();
  }
}
