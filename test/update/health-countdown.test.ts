/**
 * The update health gate counts down (issue 43): the built `vendd bundle apply` says at the start how long
 * the restarted daemon has and how long it must stay healthy, then the time left and what it waits for, when
 * the daemon turns healthy how soon it commits, and at a deadline that time is up. The daemon is a stand-in
 * on the unit's control socket that is not ready for its first answers, then healthy (or never).
 */
import { rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  makeKey,
  signedBundle,
  type TestKey,
  type UnitTree,
  unitConfig,
  unitTree,
} from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";

let key: TestKey;
const servers: Server[] = [];
const trees: UnitTree[] = [];

beforeAll(async () => {
  key = await makeKey();
});

afterAll(() => {
  for (const s of servers.splice(0)) s.close();
  for (const t of trees.splice(0)) rmSync(t.root, { recursive: true, force: true });
});

/** A daemon stand-in on the control socket: not ready for its first `notReady` answers, then healthy. */
async function daemon(tree: UnitTree, notReady: number): Promise<void> {
  let answers = 0;
  const server = createServer((sock) => {
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      const req = JSON.parse(buf.slice(0, nl)) as { id: number };
      const ready = answers++ >= notReady;
      const health = { ready, vmcLinkUp: true, serviceReachable: true, journalErrors: 0 };
      sock.end(`${JSON.stringify({ v: 1, id: req.id, ok: true, result: { health } })}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(join(tree.journalDir, "control.sock"), resolve));
  servers.push(server);
}

/** The unit's config with this health gate (the gate reads the config in force: the bundle's). */
function configWith(tree: UnitTree, name: string, health: object): string {
  const raw = JSON.parse(unitConfig(tree, [key], { name })) as { updates: Record<string, unknown> };
  raw.updates.health = health;
  return `${JSON.stringify(raw)}\n`;
}

async function applyWith(notReady: number, health: object) {
  const tree = unitTree("vendd-gate-");
  trees.push(tree);
  writeFileSync(tree.configFile, configWith(tree, "Vending 1", health));
  await daemon(tree, notReady);
  const file = join(tree.root, "u.vbundle");
  writeFileSync(file, signedBundle([key], { version: 2, configText: configWith(tree, "Vending 2", health) }));
  return vendd(["bundle", "apply", file, "--config", tree.configFile], { timeoutMs: 30_000 });
}

describe("the health gate's countdown (vendd bundle apply)", () => {
  it("says what it waits for and how long is left, then how soon it commits", async () => {
    const r = await applyWith(3, { holdMs: 1000, timeoutMs: 20_000, pollMs: 100 });
    expect(r.stdout + r.stderr).toContain("committed");
    const lines = r.stderr.split("\n").filter((l) => l.includes("health gate"));
    expect(lines[0]).toBe(
      "vendd bundle: health gate: the daemon has 20 s to be ready and then healthy for 1 s",
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^vendd bundle: health gate: (20|19) s left; waiting: not ready$/),
    );
    expect(lines.at(-1)).toMatch(
      /^vendd bundle: health gate: healthy; committed in 1 s unless it fails \(\d+ s left\)$/,
    );
    expect(r.code).toBe(0);
  });

  it("says when time is up, and rolls back", async () => {
    const r = await applyWith(1_000_000, { holdMs: 0, timeoutMs: 1500, pollMs: 100 });
    expect(r.stderr).toContain(
      "vendd bundle: health gate: the daemon has 2 s to be ready and then healthy for 0 s",
    );
    expect(r.stderr).toContain("vendd bundle: health gate: time is up (not ready)");
    expect(r.stdout + r.stderr).toMatch(/rolled back/);
  });
});
