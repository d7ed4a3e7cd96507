/**
 * The tests' PostgreSQL server: the project's one harness, scripts/postgresServer.ts (initdb in a temporary
 * directory, loopback only, trust authentication; stopped and removed by `stop()`). Start one per test file.
 */
export {
  type PostgresServer as TestPostgres,
  postgresBinDir,
  startPostgres,
} from "../../scripts/postgresServer.js";
