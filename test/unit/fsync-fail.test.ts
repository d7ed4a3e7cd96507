import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "../../src/chaos/actors.js";
import { readJournal, runScenario, startWorld, Unit, type World } from "../../src/chaos/index.js";
import { seededRandom } from "../../src/core/random.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

// reliability.md §7 rung 2 (CI): when the journal cannot make an intent durable (fsync fails with
// SQLITE_IOERR_FSYNC), no payment request is sent and the unit goes out of service. The daemon runs under
// Debian's fiu-utils (`fiu-run -x`, libfiu's POSIX preload); after a normal vend, `fiu-ctrl` makes fsync and
// fdatasync fail. CI installs it: apt-get install fiu-utils. Skipped with a message without it. Then a
// restart without fiu recovers whatever the failed transaction left in the WAL, still sending nothing.

const HAVE_FIU =
  spawnSync("fiu-run", ["-h"], { stdio: "ignore" }).error === undefined &&
  spawnSync("fiu-ctrl", ["-h"], { stdio: "ignore" }).error === undefined;
if (!HAVE_FIU)
  console.warn("fsync-fail.test.ts skipped: fiu-utils is not installed (apt-get install fiu-utils)");

let world: World;
beforeAll(async () => {
  requireBuiltCli();
  world = await startWorld(50);
});
afterAll(async () => {
  await world?.close();
});

function fiuCtrl(pid: number, command: string): void {
  const r = spawnSync("fiu-ctrl", ["-c", command, String(pid)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`fiu-ctrl ${command}: ${r.stderr}`);
}

/** Requests to the service's payment-mutation routes so far (emulator statistics). */
function mutationRequests(w: World): number {
  const byRoute = w.emu.stats().byRoute;
  return Object.entries(byRoute)
    .filter(([route]) => /^POST \/(v10\/payments|API\/V\d\d\/(Reservation|Payment))/.test(route))
    .reduce((a, [, n]) => a + n, 0);
}

describe.skipIf(!HAVE_FIU || !HAVE_SOCAT)("fsync failure: nothing is sent, the unit leaves service", () => {
  for (const driver of ["v10", "legacy"] as const) {
    it(`${driver}: a vend request after fsync starts failing sends no payment request`, {
      timeout: 60_000,
    }, async () => {
      const unit = Unit.create(world, { driver, flow: "selection" });
      try {
        await provesNothingSent(unit);
      } finally {
        await unit.dispose();
      }
    });
  }
});

async function provesNothingSent(unit: Unit): Promise<void> {
  const { sim } = world;
  const d = await unit.start({ prefix: ["fiu-run", "-x"] });
  // fiu-run execs the command: the child is the daemon itself.
  const pid = d.pid;
  if (pid === undefined) throw new Error("no daemon pid");
  const { records } = await runScenario(unit, { vends: 1, random: seededRandom(5), successRate: 1 });
  expect(records.map((r) => r.outcome)).toEqual(["success"]);
  await waitUntil(() => readJournal(unit.files.journalPath).sessions.every((s) => s.closedAt !== null), 5000);
  const sessionsBefore = readJournal(unit.files.journalPath).sessions.length;
  const ledgerBefore = unit.ledger().length;
  const requestsBefore = mutationRequests(world);

  fiuCtrl(pid, "enable name=posix/io/sync/fsync");
  fiuCtrl(pid, "enable name=posix/io/sync/fdatasync");
  const from = sim.commands.length;
  sim.vend(5, 250);
  const outOfService = await waitUntil(() => d.log.includes('"msg":"engine out of service"'), 10_000);
  expect(outOfService, d.tail()).toBe(true);
  expect(d.log).toContain("SQLITE_IOERR_FSYNC");
  // The VMC is told no, and every later vend request too: the engine stays out of service.
  await sim.waitForCommand(/^C,VEND,-1$/, 5000, from);
  expect(await waitUntil(() => sim.reader === "enabled", 3000)).toBe(true);
  const again = sim.commands.length;
  sim.vend(6, 260);
  await sim.waitForCommand(/^C,VEND,-1$/, 5000, again);
  expect(sim.approvals.some((a) => a.price === 250 || a.price === 260)).toBe(false);
  // Nothing left for the service: no mutation request, no money movement.
  await new Promise((r) => setTimeout(r, 300));
  expect(mutationRequests(world)).toBe(requestsBefore);
  expect(unit.ledger().length).toBe(ledgerBefore);
  expect(d.exited).toBeNull();

  // The rolled-back transaction is invisible to readers of the live journal.
  expect(readJournal(unit.files.journalPath).sessions.length).toBe(sessionsBefore);

  await unit.crash();
  // After a crash the WAL can still hold the frames of the transaction whose fsync failed (written, then
  // the sync failed), and a new connection replays them: the session may come back. Recovery (a restart
  // without fiu) must then find that its payment was never created and close it denied, sending nothing.
  const unresolved = await unit.settleAndStop();
  expect(unresolved).toBe(0);
  const after = readJournal(unit.files.journalPath);
  expect(after.integrity).toBe("ok");
  for (const s of after.sessions.slice(sessionsBefore)) expect(s.result).toBe("denied");
  expect(mutationRequests(world)).toBe(requestsBefore);
  expect(unit.ledger().length).toBe(ledgerBefore);
}
