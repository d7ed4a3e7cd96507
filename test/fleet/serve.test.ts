/**
 * `vendd fleet serve` as a real process (the built CLI): a fleet process SIGKILLed inside a batch's ingest
 * transaction (fault point `fleet.ingest.stored`) on SQLite and on PostgreSQL loses and doubles nothing
 * after the unit re-sends to the restarted fleet; two fleet processes sharing one PostgreSQL with units
 * posting to both at once store every event once with the right committed seq; the admin subcommands.
 * PostgreSQL is Debian's `postgresql` (installed by `.ci/run`), started in a temporary directory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import type { UnitEvent } from "../../src/core/fleetWire.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { createBundle } from "../../src/update/bundle.js";
import { makeKey, signWith } from "../../src/update/update.test-support.js";
import { CLI, vendd } from "../support/cli.js";
import { events, fleetContext, type SimUnit, signed, simUnit } from "../support/fleet.js";
import { postgresAndDir } from "../support/postgres.js";

interface Served {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `vendd fleet serve` on a free port and waits for the URL it prints. */
function serve(db: string, env: NodeJS.ProcessEnv = {}, cwd?: string, logLevel = "warn"): Promise<Served> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\``);
  const args = [CLI, "fleet", "serve", "--listen", "127.0.0.1:0", "--log-level", logLevel];
  if (db !== "") args.push("--db", db);
  const child = spawn(process.execPath, args, {
    env: { ...process.env, VENDD_FAULT_POINT: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd === undefined ? {} : { cwd }),
  });
  let out = "";
  let err = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`fleet serve did not start: ${err}`));
    }, 30_000);
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ child, url: m[1], stdout: () => out, stderr: () => err, exited });
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`fleet serve exited (${code ?? signal}) before listening: ${err}`));
    });
  });
}

/**
 * SIGTERM, and the process must end by itself, promptly: no request is in flight, so nothing may hold it
 * (a database pool left open kept a PostgreSQL fleet alive until its idle connections timed out).
 */
async function stop(s: Served): Promise<void> {
  const asked = Date.now();
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGTERM");
  const r = await s.exited;
  expect(r.code ?? r.signal, s.stderr()).toBe(0);
  expect(Date.now() - asked, "ms from SIGTERM to exit").toBeLessThan(4000);
}

async function post(
  base: string,
  u: SimUnit,
  path: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const r = signed(u.key, "POST", path, body, Date.now());
  const res = await fetch(`${base}${r.url}`, { method: "POST", headers: r.headers, body: r.payload ?? "" });
  return { status: res.status, json: await res.json() };
}

async function enrolApproved(base: string, db: string, units: SimUnit[]): Promise<void> {
  for (const u of units)
    expect((await post(base, u, "/enroll", { unitId: u.id, label: "test" })).status).toBe(202);
  const { ctx, fdb } = await fleetContext(db, systemClock);
  try {
    for (const u of units) expect(await approveUnit(ctx, u.id, "ann")).toBe("done");
  } finally {
    await fdb.close();
  }
}

/** Every stored event of each unit: seqs 1..n once, in order, and the unit's committed seq. */
async function stored(
  db: string,
): Promise<Map<string, { seqs: number[]; committed: number; sales: number }>> {
  const { ctx, fdb } = await fleetContext(db, systemClock);
  try {
    const out = new Map<string, { seqs: number[]; committed: number; sales: number }>();
    for (const u of await ctx.db.selectFrom("units").select(["id", "committed_seq"]).execute()) {
      const seqs = (
        await ctx.db.selectFrom("events").select("seq").where("unit_id", "=", u.id).orderBy("seq").execute()
      ).map((r) => r.seq);
      const sales = (
        await ctx.db.selectFrom("sales").select("session_id").where("unit_id", "=", u.id).execute()
      ).length;
      out.set(u.id, { seqs, committed: u.committed_seq, sales });
    }
    return out;
  } finally {
    await fdb.close();
  }
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const batch = (u: SimUnit, from: number, to: number): { unitId: string; events: UnitEvent[] } => ({
  unitId: u.id,
  events: events(from, to, `${u.id}-`),
});

const files = postgresAndDir("vendd-fleet-serve-");

describe.each(["sqlite", "postgres"] as const)("a fleet process SIGKILLed mid-batch on %s", (dialect) => {
  it("loses and doubles nothing: the unit re-sends to the restarted fleet, every event once, in order", async () => {
    const db = dialect === "sqlite" ? join(files.dir, "crash.db") : await files.pg.createDatabase("crash");
    const u = simUnit("vm-crash");
    // The third ingest transaction (batches 1 and 2 commit) is killed after its inserts, before its commit.
    const first = await serve(db, { VENDD_FAULT_POINT: "fleet.ingest.stored@3" });
    await enrolApproved(first.url, db, [u]);
    expect((await post(first.url, u, "/events", batch(u, 1, 10))).json).toEqual({ committed: 10 });
    expect((await post(first.url, u, "/events", batch(u, 11, 20))).json).toEqual({ committed: 20 });
    await expect(post(first.url, u, "/events", batch(u, 21, 40))).rejects.toThrow();
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    let now = (await stored(db)).get(u.id);
    expect(now).toEqual({ seqs: range(1, 20), committed: 20, sales: 10 });

    // Restarted: the unit re-sends from its last acknowledged seq (and an overlap an impatient unit sends).
    const second = await serve(db);
    expect((await post(second.url, u, "/events", batch(u, 15, 30))).json).toEqual({ committed: 30 });
    expect((await post(second.url, u, "/events", batch(u, 21, 40))).json).toEqual({ committed: 40 });
    await stop(second);
    now = (await stored(db)).get(u.id);
    expect(now).toEqual({ seqs: range(1, 40), committed: 40, sales: 20 });
  }, 90_000);
});

describe("two fleet processes sharing one PostgreSQL", () => {
  it("units posting to both at once: every event once, committed seq right", async () => {
    const db = await files.pg.createDatabase("shared");
    // Both start on the fresh database at once: the migrator's lock lets one migrate it.
    const [a, b] = await Promise.all([serve(db), serve(db)]);
    const units = ["vm-a", "vm-b", "vm-c", "vm-d"].map(simUnit);
    await enrolApproved(a.url, db, units);
    const per = 60;
    const size = 10;
    // Each unit sends each batch to both processes concurrently (a unit retrying through the load
    // balancer), and the next batch overlaps the previous one.
    await Promise.all(
      units.map(async (u) => {
        for (let from = 1; from <= per; from += size) {
          const lo = Math.max(1, from - 3);
          const hi = Math.min(per, from + size - 1);
          const acks = await Promise.all([a, b].map((s) => post(s.url, u, "/events", batch(u, lo, hi))));
          for (const ack of acks) {
            expect(ack.status).toBe(200);
            expect((ack.json as { committed: number }).committed).toBe(hi);
          }
        }
      }),
    );
    await Promise.all([stop(a), stop(b)]);
    const result = await stored(db);
    for (const u of units)
      expect(result.get(u.id), u.id).toEqual({ seqs: range(1, per), committed: per, sales: per / 2 });
  }, 90_000);
});

describe("vendd fleet serve's heap settings", () => {
  it("turns V8's allocation-site pretenuring off before serving (it kept request garbage for full GCs)", async () => {
    const s = await serve(join(files.dir, "heap.db"), {}, undefined, "info");
    await vi.waitFor(() =>
      expect(s.stderr()).toMatch(/"v8":"--no-allocation-site-pretenuring".*"msg":"server heap settings"/),
    );
    await stop(s);
  }, 30_000);
});

describe("vendd fleet admin commands", () => {
  it("serve alone uses ./fleet.db; units, approve, revoke, bundle upload; the database password is never printed", async () => {
    const cwd = mkdtempSync(join(files.dir, "cwd-"));
    const s = await serve("", {}, cwd);
    expect(s.stdout()).toContain("database ./fleet.db");
    const db = join(cwd, "fleet.db");
    const u = simUnit("vm-0001");
    expect((await post(s.url, u, "/enroll", { unitId: u.id, label: "Lobby <b>" })).status).toBe(202);
    const list = await vendd(["fleet", "units", "--db", db, "--json"]);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { units: unknown[] }).units).toEqual([
      expect.objectContaining({ id: "vm-0001", status: "pending", label: "Lobby <b>" }),
    ]);
    expect((await vendd(["fleet", "units", "--db", db])).stdout).toMatch(/vm-0001\s+pending/);
    expect(await vendd(["fleet", "approve", "vm-0001", "--db", db, "--by", "ann"])).toMatchObject({
      code: 0,
      stdout: "unit vm-0001 approved by ann\n",
    });
    expect((await post(s.url, u, "/events", batch(u, 1, 2))).json).toEqual({ committed: 2 });
    expect((await vendd(["fleet", "revoke", "vm-0001", "--db", db])).code).toBe(0);
    expect((await post(s.url, u, "/events", batch(u, 3, 3))).status).toBe(403);

    const key = await makeKey("upload");
    const pub = join(cwd, "k.pub");
    writeFileSync(pub, key.publicKeyText);
    const { bundle } = createBundle({
      configText: "unit: {id: vm-0001}\n",
      release: null,
      version: 3,
      targets: ["vm-0001"],
      expires: "2031-01-01",
    });
    const unsignedFile = join(cwd, "unsigned.bundle");
    writeFileSync(unsignedFile, bundle);
    const refused = await vendd(["fleet", "bundle", "upload", unsignedFile, "--db", db]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("refused (unsigned)");
    const signedFile = join(cwd, "signed.bundle");
    writeFileSync(signedFile, signWith(bundle, [key]));
    const ok = await vendd(["fleet", "bundle", "upload", signedFile, "--db", db, "--bundle-key", pub]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^stored: bundle [0-9a-f]{16} \(config 3\) for vm-0001/);
    await stop(s);

    const pgUrl = files.pg.url.replace("postgres@", "postgres:s3cret-pw@");
    const withPw = await serve(pgUrl);
    // Issue 32: a URL is printed without its user info at all.
    expect(withPw.stdout()).toMatch(/database postgres:\/\/127\.0\.0\.1:/);
    expect(withPw.stdout()).not.toContain("postgres:***@");
    await stop(withPw);
    expect(withPw.stdout() + withPw.stderr()).not.toContain("s3cret-pw");
    const bad = await vendd(["fleet", "serve", "--listen", "nowhere"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--listen nowhere");
    const noKey = await vendd(["fleet", "serve", "--bundle-key", join(cwd, "missing.pub")]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--bundle-key");
  }, 90_000);
});
