/**
 * Issue 41, per-unit and per-group values held by the fleet: the built `vendd fleet values` sets a unit's
 * value and a group's on a real fleet database (an identity key is refused, naming it, and nothing changes);
 * the fleet's HTTP server advertises each unit's `valuesEtag` in the heartbeat answer and serves the values
 * signed for that unit alone; the unit's fetch code (src/daemon/valuesFetch.ts) verifies and stores them
 * (0600), another unit does not get them, a document signed by another key or made for another unit is
 * refused; `vendd config print --origin` (built CLI) shows `unit` and `group:<name>` origins.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawV10, V10_ENV } from "../../src/config/fixtures.test-support.js";
import { heldValuesFile, NO_VALUES_ETAG } from "../../src/config/fleetValues.js";
import { systemClock } from "../../src/core/clock.js";
import { fetchValues, readHeldValues } from "../../src/daemon/valuesFetch.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { parsePublicKey } from "../../src/update/minisign.js";
import { signUnitValues, ValuesError, verifyUnitValues } from "../../src/update/unitValues.js";
import { makeKey, type TestKey } from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";
import { fleetContext, type SimUnit, send, simUnit } from "../support/fleet.js";

let dir: string;
let dbFile: string;
let fleetKey: TestKey;
let otherKey: TestKey;
let ctx: FleetContext;
let fdb: FleetDb;
let app: FastifyInstance;
let url: string;
const units: Record<string, SimUnit> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-values-"));
  dbFile = join(dir, "fleet.db");
  [fleetKey, otherKey] = await Promise.all([makeKey("values"), makeKey("other")]);
  ({ ctx, fdb } = await fleetContext(dbFile, systemClock));
  app = await createFleetApp(ctx, { valuesKey: fleetKey.sk });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
  for (const id of ["vm-a", "vm-b"]) {
    const u = simUnit(id);
    units[id] = u;
    const r = await send(app, u.key, "POST", "/enroll", { unitId: id, label: "site" }, Date.now());
    expect(r.status).toBe(202);
    expect(await approveUnit(ctx, id, "manager")).toBe("done");
  }
}, 60_000);

afterAll(async () => {
  await app?.close();
  await fdb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const unit = (id: string): SimUnit => {
  const u = units[id];
  if (u === undefined) throw new Error(`no unit ${id}`);
  return u;
};

const heartbeatEtag = async (id: string): Promise<string | undefined> => {
  const hb = {
    unitId: id,
    at: Date.now(),
    state: "inService",
    reason: "",
    versions: { vendd: "test", config: null, release: null },
    backlog: { events: 0, oldestAt: null, lastSeq: 0 },
    journal: { ok: true, detail: "ok" },
    vmc: "up",
    payment: "up",
    unresolved: 0,
  };
  const r = await send(app, unit(id).key, "POST", "/heartbeat", hb, Date.now());
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return (r.json as { valuesEtag?: string }).valuesEtag;
};

const cli = (args: string[]) => vendd(["fleet", "values", ...args, "--db", dbFile]);

/** A unit's config file with its key file in its own directory (the values file goes beside it). */
function unitConfig(id: string): { file: string; keyFile: string } {
  const home = mkdtempSync(join(dir, `${id}-`));
  const keyFile = join(home, "fleet.key");
  const raw = { ...rawV10(), unit: { id, name: `Vending ${id}` }, fleet: { url, keyFile } };
  const file = join(home, "config.json");
  writeFileSync(file, JSON.stringify(raw));
  return { file, keyFile };
}

async function origins(file: string): Promise<Map<string, { value: unknown; origin: string }>> {
  const r = await vendd(["config", "print", file, "--origin", "--json"], { env: V10_ENV });
  expect(r.code, r.stderr).toBe(0);
  const rows = JSON.parse(r.stdout) as { key: string; value: unknown; origin: string }[];
  return new Map(rows.map((row) => [row.key, row]));
}

describe("fleet-held values, delivered signed to one unit", () => {
  it("refuses an identity key (and an unknown key, and a bad value) from the CLI, naming it; nothing changes", async () => {
    const id = await cli(["set", "--unit", "vm-b", "unit.id", "vm-a"]);
    expect(id.code).toBe(1);
    expect(id.stderr).toMatch(/unit\.id is an identity key: it lives only on the unit.*nothing changed/);
    const pos = await cli(["set", "--group", "lobby", "payment.v10", "{merchantPosId: x}"]);
    expect(pos.code).toBe(1);
    expect(pos.stderr).toMatch(/payment\.v10 holds the identity key payment\.v10\./);
    const unknown = await cli(["set", "--unit", "vm-b", "fleet.nosuchKey", "1"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/fleet\.nosuchKey is not a key of the unit config/);
    const range = await cli(["set", "--unit", "vm-b", "fleet.heartbeatSeconds", "1"]);
    expect(range.code).toBe(1);
    expect(range.stderr).toMatch(/fleet\.heartbeatSeconds/);
    const list = await cli(["list"]);
    expect(list.stdout).toBe("no values\n");
  }, 60_000);

  it("sets a unit's value and a group's; the unit gets both, signed for it; another unit gets neither its value", async () => {
    expect(await heartbeatEtag("vm-b")).toBe(NO_VALUES_ETAG);
    const set = await cli(["set", "--unit", "vm-b", "fleet.heartbeatSeconds", "30"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe("unit vm-b: fleet.heartbeatSeconds = 30\n");
    const group = await vendd(["fleet", "group", "add", "lobby", "vm-a", "vm-b", "--db", dbFile]);
    expect(group.code, group.stderr).toBe(0);
    const gset = await cli(["set", "--group", "lobby", "fleet.batchEvents", "50"]);
    expect(gset.code, gset.stderr).toBe(0);

    // The heartbeat hint changes for vm-b; the unit fetches, verifies and stores.
    const hint = await heartbeatEtag("vm-b");
    expect(hint).toMatch(/^"v-[0-9a-f]{32}"$/);
    const b = unitConfig("vm-b");
    const file = heldValuesFile(b.keyFile);
    const signer = { key: unit("vm-b").key, clock: systemClock };
    const pk = parsePublicKey(fleetKey.publicKeyText);
    const r = await fetchValues(url, signer, { unitId: "vm-b", publicKey: pk, file, etag: NO_VALUES_ETAG });
    expect(r.status).toBe("stored");
    if (r.status !== "stored") return;
    expect(r.etag).toBe(hint);
    expect(r.document).toMatchObject({
      unitId: "vm-b",
      groups: [{ name: "lobby", values: { "fleet.batchEvents": 50 } }],
      unit: { "fleet.heartbeatSeconds": 30 },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readHeldValues(file, "vm-b").etag).toBe(hint);
    // Asked again with the ETag held: nothing new.
    expect(
      (await fetchValues(url, signer, { unitId: "vm-b", publicKey: pk, file, etag: hint ?? null })).status,
    ).toBe("unchanged");

    // `vendd config print --origin` shows each value's layer.
    const o = await origins(b.file);
    expect(o.get("fleet.heartbeatSeconds")).toMatchObject({ value: 30, origin: "unit" });
    expect(o.get("fleet.batchEvents")).toMatchObject({ value: 50, origin: "group:lobby" });
    expect(o.get("unit.id")).toMatchObject({ value: "vm-b", origin: "fleet" });

    // vm-a is in the group but has no unit value: it gets the group's value only.
    const a = unitConfig("vm-a");
    const ra = await fetchValues(
      url,
      { key: unit("vm-a").key, clock: systemClock },
      { unitId: "vm-a", publicKey: pk, file: heldValuesFile(a.keyFile), etag: NO_VALUES_ETAG },
    );
    expect(ra.status).toBe("stored");
    if (ra.status === "stored") expect(ra.document.unit).toEqual({});
    const oa = await origins(a.file);
    expect(oa.get("fleet.heartbeatSeconds")).toMatchObject({ value: 60, origin: "default" });
    expect(oa.get("fleet.batchEvents")).toMatchObject({ value: 50, origin: "group:lobby" });

    // Another unit's document, or one signed by another key, is refused; nothing is written.
    const before = readFileSync(file, "utf8");
    const forA = JSON.parse(readFileSync(heldValuesFile(a.keyFile), "utf8")) as {
      document: string;
      signature: string;
    };
    expect(() => verifyUnitValues(forA.document, forA.signature, pk, "vm-b")).toThrow(
      expect.objectContaining({ code: "otherUnit" }),
    );
    const forged = signUnitValues(
      { version: 1, unitId: "vm-b", issuedAt: Date.now(), groups: [], unit: { "fleet.heartbeatSeconds": 5 } },
      otherKey.sk,
    );
    expect(() => verifyUnitValues(forged.document, forged.signature, pk, "vm-b")).toThrow(ValuesError);
    expect(() => verifyUnitValues(forged.document, forged.signature, pk, "vm-b")).toThrow(
      /not signed by the fleet's values key/,
    );
    // A held file for another unit (copied in) is not used by the config: a warning, and the defaults.
    writeFileSync(file, readFileSync(heldValuesFile(a.keyFile)));
    const ob = await origins(b.file);
    expect(ob.get("fleet.heartbeatSeconds")).toMatchObject({ value: 60, origin: "default" });
    writeFileSync(file, before);
  }, 90_000);

  it("unset takes a value away: the hint changes and the unit's next fetch drops it", async () => {
    const un = await cli(["unset", "--unit", "vm-b", "fleet.heartbeatSeconds"]);
    expect(un.code, un.stderr).toBe(0);
    const list = await cli(["list", "--json"]);
    const rows = (JSON.parse(list.stdout) as { values: { scope: string; target: string; key: string }[] })
      .values;
    expect(rows.map((r) => `${r.scope}:${r.target}:${r.key}`)).toEqual(["group:lobby:fleet.batchEvents"]);
    const b = unitConfig("vm-b");
    const pk = parsePublicKey(fleetKey.publicKeyText);
    const r = await fetchValues(
      url,
      { key: unit("vm-b").key, clock: systemClock },
      { unitId: "vm-b", publicKey: pk, file: heldValuesFile(b.keyFile), etag: null },
    );
    expect(r.status === "stored" && r.document.unit).toEqual({});
  }, 60_000);
});
