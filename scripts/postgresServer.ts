/**
 * A throwaway PostgreSQL server for the fleet's tests and benchmarks: Debian's `postgresql` binaries
 * (`.ci/run` installs them), a cluster made by `initdb` in a temporary directory, listening on 127.0.0.1 at
 * a free port and on a unix socket in that directory, with trust authentication for loopback only. Never
 * the package's own cluster. As root, the server runs as the `postgres` user (initdb refuses root).
 * `stop()` shuts it down fast and removes the directory.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:PORT/vendd_fleet` (no password: trust on loopback). */
  url: string;
  /** A URL of a further database made on the same server. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory, or null. */
export function postgresBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], "bin");
}

/** A free TCP port on 127.0.0.1 (the kernel picks it; closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

function command(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

export async function startPostgres(opts: { database?: string } = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (bin === null)
    throw new Error(
      "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): .ci/run installs Debian's `postgresql`",
    );
  const dir = mkdtempSync(join(tmpdir(), "vendd-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    chmodSync(dir, 0o755);
    execFileSync("chown", ["postgres:postgres", dir]);
  }
  const [initCmd, initArgs] = command(join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  execFileSync(initCmd, initArgs, { stdio: "ignore" });
  const port = await freePort();
  const [pgCmd, pgArgs] = command(join(bin, "postgres"), [
    "-D",
    data,
    "-k",
    dir,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "max_connections=200",
    "-c",
    "fsync=on",
    "-c",
    "shared_buffers=64MB",
    // VENDD_PG_SETTINGS="name=value …": further server settings, for diagnosis (e.g. fsync=off).
    ...(process.env.VENDD_PG_SETTINGS?.split(" ")
      .filter((kv) => kv !== "")
      .flatMap((kv) => ["-c", kv]) ?? []),
    // VENDD_PG_SLOW_MS=N: log statements slower than N ms (with VENDD_PG_LOG=FILE to keep the log).
    ...(process.env.VENDD_PG_SLOW_MS
      ? [
          "-c",
          `log_min_duration_statement=${process.env.VENDD_PG_SLOW_MS}`,
          "-c",
          "log_checkpoints=on",
          "-c",
          "log_autovacuum_min_duration=0",
        ]
      : []),
  ]);
  const child: ChildProcess = spawn(pgCmd, pgArgs, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (b: Buffer) => {
    log = (log + b.toString()).slice(-4000);
    if (process.env.VENDD_PG_LOG) appendFileSync(process.env.VENDD_PG_LOG, b);
  });
  const psql = join(bin, "psql");
  const ready = async (): Promise<void> => {
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`postgres exited: ${log}`);
      try {
        execFileSync(psql, ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-c", "select 1"], {
          stdio: "ignore",
        });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`postgres did not start: ${log}`);
  };
  const stop = async (): Promise<void> => {
    // pg_ctl signals the postmaster itself (runuser does not pass signals on) and waits for it to go.
    if (existsSync(join(data, "postmaster.pid"))) {
      const [ctlCmd, ctlArgs] = command(join(bin, "pg_ctl"), [
        "stop",
        "-D",
        data,
        "-m",
        "fast",
        "-w",
        "-t",
        "10",
      ]);
      try {
        execFileSync(ctlCmd, ctlArgs, { stdio: "ignore" });
      } catch {
        // already gone, or it would not stop: the kill below ends the wrapper at least
      }
    }
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await ready();
    const createDatabase = async (name: string): Promise<string> => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      execFileSync(
        psql,
        ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-c", `create database ${name}`],
        {
          stdio: "ignore",
        },
      );
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    };
    const url = await createDatabase(opts.database ?? "vendd_fleet");
    return { url, createDatabase, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
