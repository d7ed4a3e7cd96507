/**
 * The fleet's scheduled jobs run in one process at a time on PostgreSQL (src/fleet/jobs/lock.ts): two separate
 * OS processes on one database; while one holds a job's advisory lock the other's run is skipped, another
 * job is not blocked, and the lock is free again when the holder finishes or is SIGKILLed. SQLite runs the
 * job directly. Needs PostgreSQL's server binaries (Debian `postgresql`, installed by `.ci/run`); the
 * child process runs the built JS (`npx tsc -p tsconfig.build.json`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { previousMonth, withJobLock } from "../../src/fleet/jobs/lock.js";
import { fleetContext } from "../support/fleet.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";

const JOBS_JS = resolve("dist/src/fleet/jobs/lock.js");
const OPEN_JS = resolve("dist/src/fleet/database.js");

/** A second fleet process that takes `job`'s lock, prints "held", and keeps it until its stdin closes. */
function holder(
  url: string,
  job: string,
): { child: ChildProcess; held: Promise<void>; exited: Promise<string> } {
  const script = `
    const { withJobLock } = await import(${JSON.stringify(JOBS_JS)});
    const { openFleetDb } = await import(${JSON.stringify(OPEN_JS)});
    const fdb = await openFleetDb(process.argv[1]);
    const ctx = { db: fdb.db, dialect: fdb.dialect, clock: { now: () => Date.now() }, logger: { info() {} }, timeZone: "UTC" };
    const r = await withJobLock(ctx, process.argv[2], () => new Promise((done) => {
      process.stdout.write("held\\n");
      process.stdin.on("end", done);
      process.stdin.resume();
    }));
    process.stdout.write(r.ran ? "released\\n" : "skipped\\n");
    await fdb.close();
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, url, job], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((ok) => {
    onHeld = ok;
  });
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes("held")) onHeld();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<string>((ok) => child.on("exit", () => ok(out + err)));
  return { child, held, exited };
}

describe("scheduled jobs: one fleet process at a time", () => {
  let pg: TestPostgres;
  let url: string;
  let ctx: FleetContext;
  let fdb: FleetDb;

  beforeAll(async () => {
    if (!existsSync(JOBS_JS)) throw new Error(`${JOBS_JS} is missing: run npx tsc -p tsconfig.build.json`);
    pg = await startPostgres();
    url = await pg.createDatabase("jobs");
    ({ ctx, fdb } = await fleetContext(url, new ManualClock(0)));
  }, 60_000);
  afterAll(async () => {
    await fdb?.close();
    await pg?.stop();
  });

  it("while another process holds a job's lock this one skips it; other jobs run; free again afterwards", async () => {
    const h = holder(url, "planCycle");
    await h.held;
    let ran = 0;
    expect(await withJobLock(ctx, "planCycle", async () => ++ran)).toEqual({ ran: false });
    expect(await withJobLock(ctx, "invoiceCycle", async () => ++ran)).toEqual({ ran: true, value: 1 });
    h.child.stdin?.end();
    expect(await h.exited).toContain("released");
    expect(await withJobLock(ctx, "planCycle", async () => ++ran)).toEqual({ ran: true, value: 2 });
  }, 30_000);

  it("a holder that is SIGKILLed leaves no lock behind; a failing job releases its lock", async () => {
    const h = holder(url, "reconcile");
    await h.held;
    expect(await withJobLock(ctx, "reconcile", async () => 1)).toEqual({ ran: false });
    h.child.kill("SIGKILL");
    await h.exited;
    // PostgreSQL ends the killed process's session when its socket closes.
    let r: { ran: boolean } = { ran: false };
    for (let i = 0; i < 50 && !r.ran; i++) {
      r = await withJobLock(ctx, "reconcile", async () => 1);
      if (!r.ran) await new Promise((ok) => setTimeout(ok, 100));
    }
    expect(r.ran).toBe(true);
    await expect(
      withJobLock(ctx, "reconcile", async () => {
        throw new Error("job failed");
      }),
    ).rejects.toThrow("job failed");
    expect(await withJobLock(ctx, "reconcile", async () => 2)).toEqual({ ran: true, value: 2 });
  }, 30_000);

  it("the invoice run bills the month before the current one", () => {
    expect(previousMonth("2026-01-02")).toBe("2025-12");
    expect(previousMonth("2026-11-25")).toBe("2026-10");
  });
});
