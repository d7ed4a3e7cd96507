/**
 * A throwaway PostgreSQL server for tests: Debian's `postgresql` (installed by `.ci/run`), initdb'd in a
 * temporary directory, listening only on a Unix socket in that directory (no TCP port), stopped and deleted
 * by `stop()`. As root, the server runs as the `postgres` system user (initdb refuses root).
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export interface TempPostgres {
  url: string;
  stop(): void;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const v = versions.find((d) => existsSync(join(root, d, "bin", "initdb")));
  if (v === undefined)
    throw new Error("PostgreSQL is not installed (Debian's postgresql package; .ci/run installs it)");
  return join(root, v, "bin");
}

export function startTempPostgres(): TempPostgres {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "vendd-pg-"));
  const asRoot = userInfo().uid === 0;
  let user = userInfo().username;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
    user = "postgres";
  }
  const run = (cmd: string, args: string[]) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { stdio: "pipe" })
      : execFileSync(join(bin, cmd), args, { stdio: "pipe" });
  const data = join(dir, "data");
  run("initdb", ["-D", data, "-U", user, "--auth=trust", "--no-sync", "-E", "UTF8"]);
  run("pg_ctl", [
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-c listen_addresses='' -c unix_socket_directories='${dir}' -c fsync=off -c full_page_writes=off`,
    "start",
  ]);
  return {
    url: `postgres://${user}@localhost/postgres?host=${encodeURIComponent(dir)}`,
    stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
