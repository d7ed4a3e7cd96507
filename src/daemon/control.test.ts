import { spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashBadgeUid } from "../../drivers/nfc/badges.js";
import { ManualClock } from "../core/clock.js";
import { ControlError } from "../core/control.js";
import { ControlClient, controlRequest } from "../core/controlClient.js";
import { hashPin, parsePinHash } from "../core/pin.js";
import { openSqliteJournal, type SqliteJournal } from "../journal/sqlite.js";
import { type CommandSpec, ControlServer, MAX_PENDING } from "./control.js";

const PIN = "73914";
let dir: string;
let journal: SqliteJournal | null = null;
let server: ControlServer | null = null;
let pinHash: Awaited<ReturnType<typeof hashPin>>;
const lines: string[] = [];
const logger = pino({ level: "debug" }, { write: (l: string) => void lines.push(l) });

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-ctl-"));
  pinHash ??= await hashPin(PIN, 1024);
  lines.length = 0;
});
afterEach(async () => {
  await server?.close();
  server = null;
  journal?.close();
  journal = null;
  rmSync(dir, { recursive: true, force: true });
});

async function start(
  clock: ManualClock,
  commands = new Map<string, CommandSpec>(),
  badges: { name: string; hash: string }[] = [],
) {
  journal = openSqliteJournal({ path: join(dir, "journal.db"), unitId: "vm-1", clock });
  const parsed = parsePinHash(pinHash);
  if (typeof parsed === "string") throw new Error(parsed);
  commands.set("echo", { run: (a) => a, audit: () => "echo" });
  server = await ControlServer.start({
    path: join(dir, "control.sock"),
    clock,
    logger,
    store: journal.console(),
    pinHash: parsed,
    badges,
    idleMs: 60_000,
    commands,
    loginMinMs: 50,
  });
  return join(dir, "control.sock");
}

async function restart(clock: ManualClock) {
  await server?.close();
  journal?.close();
  return start(clock);
}

async function login(path: string, secret: string): Promise<ControlError | null> {
  try {
    await controlRequest(path, "login", { secret });
    return null;
  } catch (err) {
    if (err instanceof ControlError) return err;
    throw err;
  }
}

describe("control server", () => {
  it("needs a login, locks out after 5 failures, doubling on the injected clock, across restarts", async () => {
    const clock = new ManualClock();
    let path = await start(clock);
    await expect(controlRequest(path, "echo", { a: 1 })).rejects.toMatchObject({ code: "loginRequired" });
    for (let i = 0; i < 4; i++) expect((await login(path, "0000"))?.code).toBe("loginFailed");
    // The daemon restarts: the count is in the journal.
    path = await restart(clock);
    expect((await login(path, "0001"))?.message).toMatch(/locked for 30 s/);
    // Even the right PIN is refused while locked, and nothing is recorded for it.
    expect((await login(path, PIN))?.code).toBe("lockedOut");
    clock.advance(30_000);
    expect((await login(path, "0002"))?.message).toMatch(/locked for 60 s/);
    path = await restart(clock);
    clock.advance(59_000);
    expect((await login(path, PIN))?.code).toBe("lockedOut");
    clock.advance(1_000);
    expect((await login(path, "0003"))?.message).toMatch(/locked for 120 s/);
    clock.advance(120_000);
    expect(await login(path, PIN)).toBeNull();
    // A success resets the count.
    expect((await login(path, "0004"))?.code).toBe("loginFailed");
    const audit = journal?.console().recentAudit(100) ?? [];
    expect(audit.map((r) => r.outcome)).toContain("locked out");
    expect(JSON.stringify(audit)).not.toContain(PIN);
    expect(lines.join("")).not.toContain(PIN);
  });

  it("logs an idle connection out on the injected clock; status answers without a login", async () => {
    const clock = new ManualClock();
    const commands = new Map<string, CommandSpec>([["status", { public: true, run: () => ({ up: true }) }]]);
    const path = await start(clock, commands);
    expect(await controlRequest(path, "status")).toEqual({ up: true });
    const client = await ControlClient.connect(path);
    await client.request("login", { secret: PIN });
    expect(await client.request("echo", { n: 1 })).toEqual({ n: 1 });
    clock.advance(60_001);
    await expect(client.request("echo", { n: 2 })).rejects.toMatchObject({ code: "loginRequired" });
    client.close();
    const audit = journal?.console().recentAudit(10) ?? [];
    expect(audit.map((r) => [r.who, r.command, r.outcome])).toEqual([
      ["PIN", "login", "ok"],
      ["PIN", "echo", "ok"],
      ["PIN", "logout", "idle timeout"],
    ]);
  });

  it("replaces a stale socket left by a killed daemon (mode 0600), refuses to replace any other file", async () => {
    const path = join(dir, "control.sock");
    spawnSync(process.execPath, [
      "-e",
      `require("node:net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    expect(lstatSync(path).isSocket()).toBe(true);
    const clock = new ManualClock();
    await start(clock);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(await controlRequest(path, "help").catch((e: Error) => e.message)).toMatch(/unknown command help/);
    await server?.close();
    server = null;
    journal?.close();
    writeFileSync(path, "not a socket");
    await expect(start(clock)).rejects.toThrow(/not a socket/);
    expect(readFileSync(path, "utf8")).toBe("not a socket");
  });

  it("logs a technician badge in by its UID, audited under the badge's name", async () => {
    const clock = new ManualClock();
    const hash = await hashBadgeUid("04:A1:B2:C3:D4:E5:F6", 1024);
    const path = await start(clock, new Map(), [{ name: "Anna", hash }]);
    const client = await ControlClient.connect(path);
    await expect(client.request("login", { secret: "04a1b2c3d4e5f7" })).rejects.toMatchObject({
      code: "loginFailed",
    });
    expect(await client.request("login", { secret: "04a1b2c3d4e5f6" })).toMatchObject({ who: "badge Anna" });
    expect(await client.request("echo", {})).toEqual({});
    client.close();
    const audit = journal?.console().recentAudit(10) ?? [];
    expect(audit.map((r) => r.who)).toEqual(["-", "badge Anna", "badge Anna"]);
    expect(JSON.stringify(audit)).not.toContain("04a1b2c3d4e5f6");
  });

  it("commits the attempt before checking the PIN", async () => {
    const clock = new ManualClock();
    const path = await start(clock);
    const client = await ControlClient.connect(path);
    const answer = client.request("login", { secret: PIN });
    // The attempt row exists while the PIN is being checked: watched once per event-loop turn (the check
    // phase follows the poll phase that read the request), so the moment between the commit and the scrypt
    // answer cannot be missed, however loaded the machine is.
    const states = () => (journal?.console().attemptsSinceSuccess() ?? []).map((a) => a.state as string);
    const deadline = Date.now() + 10_000;
    while (states().length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(states()).toEqual(["pending"]);
    await answer;
    expect(journal?.console().attemptsSinceSuccess()).toEqual([]);
    client.close();
  });

  it("wrong and right PINs take the same minimum time", async () => {
    const clock = new ManualClock();
    const path = await start(clock);
    const time = async (secret: string) => {
      const t = Date.now();
      await login(path, secret);
      return Date.now() - t;
    };
    expect(await time("9999")).toBeGreaterThanOrEqual(45);
    expect(await time(PIN)).toBeGreaterThanOrEqual(45);
  });

  it("audits commands with a hash chain; an edited row is reported", async () => {
    const clock = new ManualClock();
    const path = await start(clock);
    const client = await ControlClient.connect(path);
    await client.request("login", { secret: PIN });
    expect(await client.request("echo", { x: 1 })).toEqual({ x: 1 });
    client.close();
    const store = journal?.console();
    expect(store?.verifyAudit()).toMatchObject({ ok: true, rows: 2 });
    const raw = new Database(join(dir, "journal.db"));
    expect(() => raw.prepare("UPDATE console_audit SET outcome = 'x' WHERE id = 1").run()).toThrow(
      /append-only/,
    );
    raw.exec("DROP TRIGGER console_audit_no_update");
    raw.prepare("UPDATE console_audit SET who = 'someone else' WHERE id = 1").run();
    raw.close();
    expect(store?.verifyAudit()).toMatchObject({ ok: false, brokenAt: 1 });
  });

  it("answers garbage with errors, refuses floods, drops a client that never reads; nothing changes", async () => {
    const clock = new ManualClock();
    const path = await start(clock);
    const before = journal?.console().recentAudit(100).length;
    const answers = await new Promise<string>((resolve) => {
      const s = createConnection(path);
      let got = "";
      s.on("data", (d) => {
        got += d.toString();
      });
      s.on("connect", () => {
        s.write(Buffer.from([0, 1, 2, 0xff, 0x0a]));
        s.write("not json\n");
        s.write(`${"x".repeat(100_000)}\n`);
        s.write('{"v":1,"id":5,"cmd":"echo"}\n');
        s.write('{"v":1,"id":6,"cmd":"nope"}\n');
        setTimeout(() => {
          s.end();
          resolve(got);
        }, 200);
      });
    });
    expect(answers).toContain('"code":"badRequest"');
    expect(answers).toContain('"code":"lineTooLong"');
    expect(answers).toContain('"id":5,"ok":false,"error":{"code":"loginRequired"');
    expect(answers).toContain('"code":"unknownCommand"');
    // A flood without reading: too many pending requests are refused, then the client is dropped.
    const dropped = await new Promise<boolean>((resolve) => {
      const s = createConnection(path);
      s.pause();
      s.on("close", () => resolve(true));
      s.on("error", () => {});
      s.on("connect", () => {
        const line = '{"v":1,"id":1,"cmd":"help"}\n'.repeat(50_000);
        for (let i = 0; i < 4; i++) s.write(line);
      });
      setTimeout(() => resolve(false), 5000);
    });
    expect(dropped).toBe(true);
    expect(MAX_PENDING).toBeGreaterThan(0);
    expect(journal?.console().recentAudit(100).length).toBe(before);
    // The server still serves.
    expect(await login(path, PIN)).toBeNull();
  });
});
