/**
 * Issue 32, defect 2: every serving command (the unit daemon `vendd run`, `vendd fleet serve`,
 * `vendd emulator`), given an address in use or a database it cannot reach, prints the cause naming where
 * and exits non-zero within 2 s (before, `fleet serve` printed `listen EADDRINUSE` and hung forever, and the
 * daemon took over a control socket another process served). A fleet config with an impossible cron
 * schedule is refused at start (exit 2, file and field named) instead of serving without its schedules.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-fatal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let holder: Server | undefined;
async function release(): Promise<void> {
  const h = holder;
  holder = undefined;
  if (h !== undefined) await new Promise<void>((resolve) => h.close(() => resolve()));
}
afterEach(release);

/** A listener holding `where` (a TCP port on 127.0.0.1 when a number is given, else a Unix socket path). */
async function hold(where: number | string): Promise<number> {
  const server = createServer((socket) => socket.destroy());
  holder = server;
  await new Promise<void>((resolve) =>
    typeof where === "number" ? server.listen(where, "127.0.0.1", resolve) : server.listen(where, resolve),
  );
  const addr = server.address();
  return typeof addr === "object" && addr !== null ? addr.port : 0;
}

interface Ended {
  code: number | null;
  stderr: string;
  /** From the spawn to the exit, ms. */
  ms: number;
}

/** Runs the CLI; how long it lived from its spawn to its exit. */
function run(args: string[]): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, VENDD_FAULT_POINT: "" },
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.resume();
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

/** The time a bare Node process takes to start and end on this machine now, ms. */
async function nodeStartMs(): Promise<number> {
  const started = Date.now();
  await new Promise<void>((resolve) => spawn(process.execPath, ["-e", "0"]).on("exit", () => resolve()));
  return Date.now() - started;
}

async function expectFastFailure(args: string[], message: RegExp): Promise<Ended> {
  const base = await nodeStartMs();
  const r = await run(args);
  expect(r.code, r.stderr).not.toBe(0);
  expect(r.code).not.toBeNull();
  expect(r.stderr).toMatch(message);
  expect(r.ms - base, `exited ${r.ms} ms after spawn (bare node: ${base} ms)`).toBeLessThan(2_000);
  return r;
}

function unitConfig(name: string, journalPath: string): string {
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    [
      `unit: { id: vm-${name}, name: Fatal test unit }`,
      `journal: { path: ${journalPath} }`,
      "display: { kind: none }",
      "payment:",
      "  driver: v10",
      "  v10:",
      "    baseUrl: http://127.0.0.1:9/",
      "    tokenUrl: http://127.0.0.1:9/t",
      "    clientId: c",
      "    merchantVat: DK12345678",
      '    merchantBrandId: "b"',
      '    merchantLocationId: "l"',
    ].join("\n"),
    { mode: 0o600 },
  );
  return config;
}

const secrets = join(dir, "secrets.yaml");
writeFileSync(secrets, "v10: { clientSecret: fatal-test-secret }\n", { mode: 0o600 });

describe("a serving command that cannot serve exits non-zero within 2 s, naming the cause", () => {
  it("vendd fleet serve: the port in use", async () => {
    const port = await hold(0);
    await expectFastFailure(
      ["fleet", "serve", "--listen", `127.0.0.1:${port}`, "--db", join(dir, "port.db")],
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: another process uses that address.*--listen`),
    );
  }, 30_000);

  it("vendd fleet serve: PostgreSQL unreachable, and a SQLite path that cannot be opened", async () => {
    const r = await expectFastFailure(
      ["fleet", "serve", "--listen", "127.0.0.1:0", "--db", "postgres://fleet:pw-canary@127.0.0.1:1/fleet"],
      /fleet database postgres:\/\/127\.0\.0\.1:1\/fleet: .*ECONNREFUSED.*check that PostgreSQL runs there/,
    );
    expect(r.stderr).not.toContain("pw-canary");
    expect(r.stderr).not.toContain("migration unknown");
    await expectFastFailure(
      ["fleet", "serve", "--listen", "127.0.0.1:0", "--db", "/"],
      /fleet database \/: cannot be opened as a file.*--db/,
    );
  }, 30_000);

  it("vendd fleet serve: an impossible cron schedule is refused with the file and the field (exit 2)", async () => {
    const config = join(dir, "fleet-cron.yaml");
    writeFileSync(
      config,
      `listen: 127.0.0.1:0\ndb: ${join(dir, "cron.db")}\nschedules: {reconcile: "99 99 * * *"}\n`,
    );
    const r = await expectFastFailure(
      ["fleet", "serve", "--config", config],
      /schedules\.reconcile: not a valid cron/,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(config);
  }, 30_000);

  it("vendd emulator: the port in use, and a seed file that cannot be read", async () => {
    const port = await hold(0);
    await expectFastFailure(
      ["emulator", "--port", String(port)],
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: another process uses that port.*--port`),
    );
    await expectFastFailure(
      ["emulator", "--seed", join(dir, "missing-seed.json")],
      /--seed .*missing-seed\.json: cannot be read \(ENOENT\)/,
    );
  }, 30_000);

  it("vendd run: the control socket served by another process, and the journal held by another daemon", async () => {
    const journal = join(dir, "sock", "journal.db");
    rmSync(join(dir, "sock"), { recursive: true, force: true });
    mkdirSync(join(dir, "sock"), { mode: 0o700 });
    await hold(join(dir, "sock", "control.sock"));
    await expectFastFailure(
      ["run", "--config", unitConfig("sock", journal), "--secrets", secrets],
      /control socket .*control\.sock is in use by another process.*console\.socket/,
    );
    await release();

    // The journal held: a first daemon runs; a second on the same journal ends at once.
    const lockedJournal = join(dir, "held", "journal.db");
    mkdirSync(join(dir, "held"), { mode: 0o700 });
    const config = unitConfig("held", lockedJournal);
    const first = spawn(process.execPath, [CLI, "run", "--config", config, "--secrets", secrets], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      await new Promise<void>((resolve) => {
        let text = "";
        first.stderr.on("data", (d: Buffer) => {
          text += d.toString();
          if (text.includes("control socket listening")) resolve();
        });
      });
      const second = unitConfig("held2", lockedJournal);
      await expectFastFailure(
        ["run", "--config", second, "--secrets", secrets],
        /journal .*journal\.db is in use by vendd \(PID/,
      );
    } finally {
      first.kill("SIGKILL");
    }
  }, 60_000);
});
