/**
 * A throwaway PostgreSQL server for tests: `initdb` and `postgres` (Debian's `postgresql` package, installed
 * by `.ci/run`) in a temporary directory, trust authentication, listening on 127.0.0.1 at a free port and on
 * a unix socket in that directory. As root the server runs as the `postgres` user (initdb refuses root).
 * `stop()` shuts it down and removes the directory. Start one per test file (about 2 s), not one per test.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  /** A URL for a fresh database made by `createDatabase`. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const v = versions[0];
  if (v === undefined)
    throw new Error(
      "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): `.ci/run` installs the Debian `postgresql` package; run it, or `apt-get install postgresql`",
    );
  return join(root, v, "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "vendd-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]): string[] =>
    asRoot ? ["runuser", "-u", "postgres", "--", cmd, ...args] : [cmd, ...args];
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const [initCmd = "", ...initArgs] = run(join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "-A",
    "trust",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  try {
    execFileSync(initCmd, initArgs, { stdio: "pipe" });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`initdb failed: ${stderr.slice(0, 500)}`);
  }
  const port = await freePort();
  const [pgCmd = "", ...pgArgs] = run(join(bin, "postgres"), [
    "-D",
    data,
    "-k",
    dir,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "max_connections=100",
  ]);
  const child: ChildProcess = spawn(pgCmd, pgArgs, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch {
      await client.end().catch(() => {});
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`postgres did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    async createDatabase(name: string): Promise<string> {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad database name ${name}`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop(): Promise<void> {
      if (child.exitCode === null) {
        // Fast shutdown (SIGINT to the postmaster itself: runuser would turn a signal into SIGTERM, the
        // "smart" shutdown that waits for every client to leave).
        const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
        if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGINT");
        else child.kill("SIGINT");
        const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
