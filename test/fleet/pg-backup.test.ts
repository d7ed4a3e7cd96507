/**
 * The PostgreSQL backup procedure of docs/fleet-server.md ("PostgreSQL: pg_dump"), as written there: the
 * fleet's database owned by a role `fleet`, `pg_dump --format=custom` taken while `vendd fleet serve` runs and
 * a unit posts events, restored with `createdb -O fleet` and `pg_restore --no-owner --role=fleet` into a new
 * database, and a fleet server started on it as `fleet`: it serves, has the users and units, holds a
 * consistent snapshot (each unit's events are exactly 1..its committed seq), and the unit's re-sent backlog
 * brings it up to date. PostgreSQL is Debian's `postgresql` (installed by .ci/run), started in a temporary
 * directory on loopback.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import type { UnitEvent } from "../../src/core/fleetWire.js";
import { CLI, vendd } from "../support/cli.js";
import { events, fleetContext, type SimUnit, signed, simUnit } from "../support/fleet.js";
import { postgresAndDir, postgresBinDir } from "../support/postgres.js";

const run = promisify(execFile);
const files = postgresAndDir("vendd-fleet-pgdump-");
const children: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map((c) => new Promise((done) => c.once("exit", done).kill("SIGTERM"))),
  );
});

function serve(db: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [CLI, "fleet", "serve", "--db", db, "--listen", "127.0.0.1:0", "--log-level", "warn"],
    { env: { ...process.env, VENDD_FAULT_POINT: "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-2000);
  });
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not start: ${err}`)), 30_000);
    child.once("exit", (code) => fail(new Error(`fleet serve exited ${code}: ${err}`)));
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        done(m[1]);
      }
    });
  });
}

async function post(base: string, u: SimUnit, path: string, body: unknown): Promise<unknown> {
  const r = signed(u.key, "POST", path, body, Date.now());
  const res = await fetch(`${base}${r.url}`, { method: "POST", headers: r.headers, body: r.payload ?? "" });
  expect(res.status, path).toBeLessThan(300);
  return res.json();
}

const batch = (u: SimUnit, from: number, to: number): { unitId: string; events: UnitEvent[] } => ({
  unitId: u.id,
  events: events(from, to, `${u.id}-`),
});

/** Each unit's committed seq and stored event seqs; the users' names. */
async function contents(db: string) {
  const { ctx, fdb } = await fleetContext(db, systemClock);
  try {
    const units = new Map<string, { status: string; committed: number; seqs: number[] }>();
    for (const u of await ctx.db.selectFrom("units").select(["id", "status", "committed_seq"]).execute()) {
      const seqs = (
        await ctx.db.selectFrom("events").select("seq").where("unit_id", "=", u.id).orderBy("seq").execute()
      ).map((r) => Number(r.seq));
      units.set(u.id, { status: u.status, committed: Number(u.committed_seq), seqs });
    }
    const users = (await ctx.db.selectFrom("users").select("username").execute()).map((r) => r.username);
    return { units, users };
  } finally {
    await fdb.close();
  }
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
/** At most this many events from unit a while the dump runs. */
const LAST = 5000;

describe("PostgreSQL backup with pg_dump and restore with pg_restore (docs/fleet-server.md)", () => {
  it("dumps while the fleet serves and a unit posts; the restored database serves a consistent snapshot", {
    timeout: 180_000,
  }, async () => {
    const bin = postgresBinDir();
    if (bin === null) throw new Error("PostgreSQL is not installed: .ci/run installs Debian's postgresql");
    const port = new URL(files.pg.url).port;
    const conn = ["-h", "127.0.0.1", "-p", port];
    const psql = (sql: string) =>
      run(join(bin, "psql"), [...conn, "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql]);
    await psql("CREATE ROLE fleet LOGIN");
    await psql("CREATE DATABASE fleet OWNER fleet");
    const db = `postgres://fleet@127.0.0.1:${port}/fleet`;
    const url = await serve(db);

    const pw = join(files.dir, "pw");
    writeFileSync(pw, "manager-password-1\n", { mode: 0o600 });
    const add = await vendd([
      "fleet",
      "user",
      "add",
      "ann",
      "--role",
      "manager",
      "--db",
      db,
      "--password-file",
      pw,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const [a, b] = [simUnit("u-a"), simUnit("u-b")];
    for (const u of [a, b]) {
      await post(url, u, "/enroll", { unitId: u.id, label: "pg backup" });
      const ok = await vendd(["fleet", "approve", u.id, "--db", db, "--by", "ann"]);
      expect(ok.code, ok.stderr).toBe(0);
    }
    expect(await post(url, b, "/events", batch(b, 1, 20))).toEqual({ committed: 20 });

    // pg_dump while unit a posts batches of 10.
    const dump = join(files.dir, "fleet.dump");
    expect(await post(url, a, "/events", batch(a, 1, 10))).toEqual({ committed: 10 });
    let posting = true;
    let sent = 10;
    const load = (async () => {
      while (posting && sent < LAST) {
        await post(url, a, "/events", batch(a, sent + 1, sent + 10));
        sent += 10;
      }
    })();
    const dumped = await run(join(bin, "pg_dump"), ["--format=custom", `--file=${dump}`, db]);
    expect(dumped.stderr).toBe("");
    posting = false;
    await load;
    const before = await contents(db);

    // Restore as the document says: an empty database owned by fleet, objects owned by fleet.
    await run(join(bin, "createdb"), [...conn, "-U", "postgres", "-O", "fleet", "fleet_restored"]);
    const restored = await run(join(bin, "pg_restore"), [
      ...conn,
      "-U",
      "postgres",
      "--no-owner",
      "--role=fleet",
      "--dbname=fleet_restored",
      dump,
    ]);
    expect(restored.stderr).toBe("");
    const rdb = `postgres://fleet@127.0.0.1:${port}/fleet_restored`;
    const rurl = await serve(rdb);
    expect((await fetch(`${rurl}/healthz`)).status).toBe(200);

    const after = await contents(rdb);
    expect(after.users).toEqual(["ann"]);
    expect(after.units.get(b.id)).toEqual({ status: "approved", committed: 20, seqs: range(1, 20) });
    const ra = after.units.get(a.id);
    expect(ra?.status).toBe("approved");
    // One snapshot: the events stored are exactly those committed, no more, no fewer.
    expect(ra?.committed).toBeGreaterThanOrEqual(10);
    expect(ra?.committed).toBeLessThanOrEqual(before.units.get(a.id)?.committed ?? 0);
    expect(ra?.seqs).toEqual(range(1, ra?.committed ?? 0));

    // The unit re-sends what the restored fleet has not committed; the restored fleet (as fleet) stores it.
    const total = before.units.get(a.id)?.committed ?? 0;
    expect(total).toBe(sent);
    if ((ra?.committed ?? 0) < total)
      expect(await post(rurl, a, "/events", batch(a, (ra?.committed ?? 0) + 1, total))).toEqual({
        committed: total,
      });
    expect((await contents(rdb)).units.get(a.id)?.seqs).toEqual(range(1, total));
  });
});
