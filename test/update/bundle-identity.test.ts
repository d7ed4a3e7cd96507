/**
 * Issue 41, identity on the unit: the built `vendd bundle apply` on scratch unit trees refuses a config
 * bundle carrying another unit's identity, naming the key, and changes nothing; `vendd config split` gives a
 * one-file unit its identity file; one fleet-wide bundle applied on two units keeps each one's id, keys and
 * point of sale; `vendd config print --origin` shows the layers.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { readState } from "../../src/update/state.js";
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

/** A daemon stand-in on the unit's control socket that is always healthy (the health gate passes). */
async function healthyDaemon(tree: UnitTree): Promise<void> {
  const server = createServer((sock) => {
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      const req = JSON.parse(buf.slice(0, nl)) as { id: number };
      const health = { ready: true, vmcLinkUp: true, serviceReachable: true, journalErrors: 0 };
      sock.end(`${JSON.stringify({ v: 1, id: req.id, ok: true, result: { health } })}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(join(tree.journalDir, "control.sock"), resolve));
  servers.push(server);
}

/** A one-file unit config: unit `id`, its own point of sale and fleet key file. */
function unitOf(tree: UnitTree, id: string, name: string): string {
  const payment = rawV10().payment;
  payment.v10 = { ...(payment.v10 as object), merchantPosId: `pos-${id}`, clientSystemName: "Version 1" };
  return unitConfig(tree, [key], {
    extra: {
      unit: { id, name },
      payment,
      fleet: { url: "http://127.0.0.1:9", keyFile: join(tree.root, `${id}.key`) },
    },
  });
}

async function newUnit(id: string, name: string): Promise<UnitTree> {
  const tree = unitTree("vendd-ident-");
  trees.push(tree);
  writeFileSync(tree.configFile, unitOf(tree, id, name));
  await healthyDaemon(tree);
  return tree;
}

function bundleFile(tree: UnitTree, name: string, version: number, configText: string): string {
  const file = join(tree.root, name);
  writeFileSync(file, signedBundle([key], { version, targets: ["fleet-a"], configText }));
  return file;
}

async function apply(tree: UnitTree, file: string) {
  const r = await vendd(["bundle", "apply", file, "--config", tree.configFile, "--json"], {
    timeoutMs: 30_000,
  });
  const report = JSON.parse(r.stdout) as {
    outcomes: { result: string; code: string | null; reason: string | null }[];
  };
  return { ...r, outcome: report.outcomes[0] };
}

interface OriginRow {
  key: string;
  value: unknown;
  origin: string;
}

async function origins(tree: UnitTree): Promise<Map<string, OriginRow>> {
  const r = await vendd(["config", "print", tree.configFile, "--origin", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return new Map((JSON.parse(r.stdout) as OriginRow[]).map((row) => [row.key, row]));
}

/** The fleet-wide config: no identity key, the same file for every unit of fleet-a. */
function fleetWide(version: string): string {
  const v10 = rawV10().payment.v10 as Record<string, unknown>;
  return `${JSON.stringify({
    payment: {
      driver: "v10",
      v10: { baseUrl: v10.baseUrl, tokenUrl: v10.tokenUrl, clientSystemName: version },
    },
    engine: { maxPrice: "3.00" },
    fleet: { url: "http://127.0.0.1:9" },
    updates: {
      publicKeys: [key.line],
      fleet: "fleet-a",
      restartCommand: ["true"],
      health: { holdMs: 300, timeoutMs: 3000, pollMs: 50 },
    },
  })}\n`;
}

describe("identity keys stay on the unit (vendd bundle apply, vendd config split, config print --origin)", () => {
  it("refuses a bundle carrying another unit's identity, naming the key, and nothing changes", async () => {
    const b = await newUnit("vm-b", "Vending B");
    const inForce = readFileSync(b.configFile, "utf8");
    // Built from unit vm-a's whole config for the fleet (the report), applied on vm-b.
    const other = unitTree("vendd-ident-other-");
    trees.push(other);
    const file = bundleFile(b, "a.vbundle", 14, unitOf(b, "vm-a", "Vending A"));
    const r = await apply(b, file);
    expect(r.code).toBe(1);
    expect(r.outcome).toMatchObject({ result: "refused", code: "identity" });
    expect(r.outcome?.reason).toMatch(
      /^the bundle changes unit\.id, unit\.name, payment\.v10\.merchantPosId, fleet\.keyFile \(identity keys stay on the unit/,
    );
    expect(r.stderr).toContain("refused: the bundle changes unit.id");
    expect(readFileSync(b.configFile, "utf8")).toBe(inForce);
    expect(readState(b.stateDir)).toMatchObject({ highWater: 0, pending: null });
    const status = await vendd(["bundle", "status", "--config", b.configFile]);
    expect(status.stdout).toContain("high-water mark: 0");
    expect(status.stdout).toMatch(
      /last outcome: refused version 14 \(config\) from .*the bundle changes unit\.id.*\[identity\]/,
    );

    // The same unit after `vendd config split`: a bundle may not even name an identity key.
    const split = await vendd(["config", "split", b.configFile]);
    expect(split.code, split.stderr).toBe(0);
    expect(split.stdout).toMatch(/^wrote .*identity\.yaml \(the identity, \d+ values\)/);
    const again = await apply(b, bundleFile(b, "a2.vbundle", 15, unitOf(b, "vm-b", "Vending B")));
    expect(again.outcome).toMatchObject({ result: "refused", code: "identity" });
    expect(again.outcome?.reason).toMatch(
      /^the bundle sets unit\.id, unit\.name, .*\(identity keys stay on the unit: .*identity\.yaml/,
    );
    expect(readState(b.stateDir)).toMatchObject({ highWater: 0, pending: null });
    const o = await origins(b);
    expect(o.get("unit.id")).toEqual({ key: "unit.id", value: "vm-b", origin: "identity" });
  }, 90_000);

  it("one fleet-wide bundle on two units keeps each one's id, keys and point of sale", async () => {
    const a = await newUnit("vm-a", "Vending A");
    const b = await newUnit("vm-b", "Vending B");
    // A fleet-wide bundle reaching a unit still on one file says how to split it; nothing changes.
    const early = await apply(a, bundleFile(a, "early.vbundle", 2, fleetWide("Fleet 2")));
    expect(early.outcome).toMatchObject({ result: "refused", code: "no_identity_file" });
    expect(early.outcome?.reason).toContain("vendd config split");
    for (const t of [a, b]) expect((await vendd(["config", "split", t.configFile])).code).toBe(0);

    for (const t of [a, b]) {
      const r = await apply(t, bundleFile(t, "fleet.vbundle", 3, fleetWide("Fleet 3")));
      expect(r.outcome, r.stderr).toMatchObject({ result: "committed" });
      expect(readState(t.stateDir).highWater).toBe(3);
    }
    for (const [t, id] of [
      [a, "vm-a"],
      [b, "vm-b"],
    ] as const) {
      const o = await origins(t);
      expect(o.get("unit.id")).toMatchObject({ value: id, origin: "identity" });
      expect(o.get("payment.v10.merchantPosId")).toMatchObject({ value: `pos-${id}`, origin: "identity" });
      expect(o.get("fleet.keyFile")).toMatchObject({ value: join(t.root, `${id}.key`), origin: "identity" });
      expect(o.get("updates.stateDir")).toMatchObject({ value: t.stateDir, origin: "identity" });
      expect(o.get("payment.v10.clientSystemName")).toMatchObject({ value: "Fleet 3", origin: "fleet" });
      expect(o.get("engine.maxPrice")).toMatchObject({ value: "3.00", origin: "fleet" });
      expect(o.get("journal.retentionDays")).toMatchObject({ value: 90, origin: "default" });
    }
    const text = await vendd(["config", "print", a.configFile, "--origin"]);
    expect(text.stdout).toMatch(/^identity +unit\.id = "vm-a"$/m);
    expect(text.stdout).toMatch(/^fleet +engine\.maxPrice = "3\.00"$/m);
  }, 120_000);
});
