/**
 * SIGKILL at every step of applying a bundle (issue 14 acceptance): the built `vendd bundle apply` runs as
 * a child process with VENDD_FAULT_POINT at update.staged, update.swapped, update.health and
 * update.rollback. After each kill the whole old or the whole new config (and release) is in force and
 * the high-water mark is unchanged; the next run finishes or rolls back the interrupted apply and reports
 * it. The daemon is a fake control socket in this process that reports health from the config in force.
 */
import { mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { readState } from "../../src/update/state.js";
import {
  makeKey,
  releaseTarball,
  signedBundle,
  type TestKey,
  type UnitTree,
  unitConfig,
  unitTree,
  versionNameIn,
} from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";

let key: TestKey;
beforeAll(async () => {
  key = await makeKey("crash");
});

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** The fake daemon: `status` answers with health derived from the version name in the config in force. */
async function fakeDaemon(tree: UnitTree): Promise<void> {
  const server = createServer((sock) => {
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      const req = JSON.parse(buf.slice(0, nl)) as { id: number };
      const name = versionNameIn(tree.configFile);
      const health = {
        ready: true,
        vmcLinkUp: !name.startsWith("Broken"),
        serviceReachable: true,
        journalErrors: 0,
      };
      sock.end(`${JSON.stringify({ v: 1, id: req.id, ok: true, result: { health } })}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(join(tree.journalDir, "control.sock"), resolve));
  servers.push(server);
}

interface Setup {
  tree: UnitTree;
  oldText: string;
  newText: string;
  file: string;
  restarts: () => number;
}

async function setup(name: string, release = false): Promise<Setup> {
  const tree = unitTree("vendd-crash-");
  const restartLog = join(tree.root, "restarts");
  writeFileSync(restartLog, "");
  const restartCommand = [
    process.execPath,
    "-e",
    `require("fs").appendFileSync(${JSON.stringify(restartLog)}, "r\\n")`,
  ];
  const oldText = unitConfig(tree, [key], { name: "Old", restartCommand });
  const newText = unitConfig(tree, [key], { name, restartCommand });
  writeFileSync(tree.configFile, oldText);
  if (release) {
    mkdirSync(join(tree.releaseRoot, "releases", "1"), { recursive: true });
    writeFileSync(join(tree.releaseRoot, "releases", "1", "VERSION"), "one");
    symlinkSync("releases/1", join(tree.releaseRoot, "current"));
  }
  const file = join(tree.root, "b.vbundle");
  writeFileSync(
    file,
    signedBundle([key], {
      version: 2,
      configText: newText,
      release: release ? releaseTarball(tree.root, "two") : null,
    }),
  );
  await fakeDaemon(tree);
  return {
    tree,
    oldText,
    newText,
    file,
    restarts: () => readFileSync(restartLog, "utf8").split("\n").filter(Boolean).length,
  };
}

function apply(s: Setup, extra: string[], env: NodeJS.ProcessEnv = {}) {
  return vendd(["bundle", "apply", ...extra, "--config", s.tree.configFile, "--json"], {
    env,
    timeoutMs: 30_000,
  });
}

describe("SIGKILL during vendd bundle apply", () => {
  it.each([
    ["update.staged", "staged", "old"],
    ["update.swapped", "swapped", "new"],
    ["update.health", "swapped", "new"],
  ] as const)(
    "killed at %s: the %s state leaves the whole %s config; the next run finishes",
    async (point, phase, inForce) => {
      const s = await setup("New");
      const killed = await apply(s, [s.file], { VENDD_FAULT_POINT: point });
      expect(killed.code, killed.stderr).toBeNull();
      expect(readFileSync(s.tree.configFile, "utf8")).toBe(inForce === "old" ? s.oldText : s.newText);
      const mid = readState(s.tree.stateDir);
      expect(mid.highWater).toBe(0);
      expect(mid.pending).toMatchObject({ version: 2, phase });

      const next = await apply(s, [s.file]);
      const report = JSON.parse(next.stdout) as {
        recovered: { result: string; code: string | null } | null;
        outcomes: { result: string }[];
      };
      if (phase === "staged") {
        // Nothing had changed: the interrupted one is dropped, and this run applies the bundle afresh.
        expect(report.recovered).toMatchObject({ result: "rolled_back", code: "interrupted" });
        expect(report.outcomes[0]).toMatchObject({ result: "committed" });
      } else {
        // The new config was whole and in force: the next run restarts, gates and commits it.
        expect(report.recovered).toMatchObject({ result: "committed" });
        expect(report.outcomes[0]).toMatchObject({ result: "refused", code: "equal" });
      }
      expect(next.code).toBe(phase === "staged" ? 0 : 1);
      expect(readFileSync(s.tree.configFile, "utf8")).toBe(s.newText);
      expect(readState(s.tree.stateDir)).toMatchObject({ highWater: 2, pending: null });
      rmSync(s.tree.root, { recursive: true, force: true });
    },
    60_000,
  );

  it("killed in the health gate of a config that never becomes healthy: recovery rolls it back", async () => {
    const s = await setup("Broken");
    const killed = await apply(s, [s.file], { VENDD_FAULT_POINT: "update.health" });
    expect(killed.code).toBeNull();
    expect(readFileSync(s.tree.configFile, "utf8")).toBe(s.newText);
    const during = await vendd(["bundle", "status", "--config", s.tree.configFile, "--json"]);
    expect(JSON.parse(during.stdout)).toMatchObject({
      highWater: 0,
      pending: { version: 2, phase: "swapped" },
    });
    const next = await apply(s, ["--recover"]);
    expect(JSON.parse(next.stdout)).toMatchObject({
      recovered: { result: "rolled_back", code: "unhealthy" },
    });
    const after = await vendd(["bundle", "status", "--config", s.tree.configFile]);
    expect(after.stdout).toContain("high-water mark: 0\nlast outcome: rolled back version 2 (config) from ");
    expect(after.stdout).toContain("VMC link down");
    expect(readFileSync(s.tree.configFile, "utf8")).toBe(s.oldText);
    expect(readState(s.tree.stateDir)).toMatchObject({ highWater: 0, pending: null, rolledBack: [2] });
    // Restarts: the new config, the recovery's restart, the rollback's.
    expect(s.restarts()).toBe(3);
    rmSync(s.tree.root, { recursive: true, force: true });
  }, 60_000);

  it("killed inside the rollback: the last known good is whole in force, the next run completes the rollback", async () => {
    const s = await setup("Broken");
    const killed = await apply(s, [s.file], { VENDD_FAULT_POINT: "update.rollback" });
    expect(killed.code).toBeNull();
    expect(readFileSync(s.tree.configFile, "utf8")).toBe(s.oldText);
    expect(readState(s.tree.stateDir)).toMatchObject({ highWater: 0, pending: { phase: "rolling_back" } });
    const next = await apply(s, ["--recover"]);
    expect(JSON.parse(next.stdout)).toMatchObject({
      recovered: { result: "rolled_back", code: "unhealthy" },
    });
    expect((JSON.parse(next.stdout) as { recovered: { reason: string } }).recovered.reason).toContain(
      "VMC link down",
    );
    expect(readFileSync(s.tree.configFile, "utf8")).toBe(s.oldText);
    expect(readState(s.tree.stateDir)).toMatchObject({ highWater: 0, pending: null, rolledBack: [2] });
    rmSync(s.tree.root, { recursive: true, force: true });
  }, 60_000);

  it("a release killed after the swap: current names the whole new release, recovery commits it", async () => {
    const s = await setup("New", true);
    const killed = await apply(s, [s.file], { VENDD_FAULT_POINT: "update.swapped" });
    expect(killed.code).toBeNull();
    expect(readlinkSync(join(s.tree.releaseRoot, "current"))).toBe("releases/2");
    expect(readFileSync(join(s.tree.releaseRoot, "current", "VERSION"), "utf8")).toBe("two");
    expect(readFileSync(join(s.tree.releaseRoot, "releases", "1", "VERSION"), "utf8")).toBe("one");
    const next = await apply(s, ["--recover"]);
    expect(JSON.parse(next.stdout)).toMatchObject({ recovered: { result: "committed", kind: "release" } });
    expect(readState(s.tree.stateDir).highWater).toBe(2);
    rmSync(s.tree.root, { recursive: true, force: true });
  }, 60_000);

  it("a release killed after staging: current still names the old release, recovery drops the new one", async () => {
    const s = await setup("New", true);
    const killed = await apply(s, [s.file], { VENDD_FAULT_POINT: "update.staged" });
    expect(killed.code).toBeNull();
    expect(readlinkSync(join(s.tree.releaseRoot, "current"))).toBe("releases/1");
    expect(readFileSync(s.tree.configFile, "utf8")).toBe(s.oldText);
    const next = await apply(s, ["--recover"]);
    expect(JSON.parse(next.stdout)).toMatchObject({
      recovered: { result: "rolled_back", code: "interrupted" },
    });
    expect(readlinkSync(join(s.tree.releaseRoot, "current"))).toBe("releases/1");
    expect(readState(s.tree.stateDir)).toMatchObject({ highWater: 0, pending: null });
    rmSync(s.tree.root, { recursive: true, force: true });
  }, 60_000);
});
