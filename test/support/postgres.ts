/**
 * The tests' PostgreSQL server: the project's one harness, scripts/postgresServer.ts (initdb in a temporary
 * directory, loopback only, trust authentication; stopped and removed by `stop()`). Start one per test file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type PostgresServer, startPostgres } from "../../scripts/postgresServer.js";

export {
  type PostgresServer as TestPostgres,
  postgresBinDir,
  startPostgres,
} from "../../scripts/postgresServer.js";

/**
 * For one test file: a PostgreSQL server and a temporary directory, made before its tests and removed after
 * them. Read `pg` and `dir` inside hooks and tests (they throw before the file's `beforeAll` has run).
 */
export function postgresAndDir(prefix: string): { readonly pg: PostgresServer; readonly dir: string } {
  let pg: PostgresServer | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 30_000);
  return {
    get pg() {
      if (pg === undefined) throw new Error("the test PostgreSQL server is not started yet");
      return pg;
    },
    get dir() {
      if (dir === undefined) throw new Error("the test directory is not made yet");
      return dir;
    },
  };
}
