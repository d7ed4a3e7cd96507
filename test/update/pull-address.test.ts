/**
 * Issue 41: the fleet's bundle address is the one the docs and `vendd bundle pull --help` give,
 * `<fleet.url>/api/unit/v1/bundle`, and a unit with a `fleet` section and no `updates.pullUrl` pulls from
 * it (signed with its fleet key) with nothing else set: the built CLI against a real fleet server.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { systemClock } from "../../src/core/clock.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { fleetBundleUrl } from "../../src/core/fleetWire.js";
import { storeBundle } from "../../src/fleet/bundles/store.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { createBundle } from "../../src/update/bundle.js";
import { makeKey, signWith } from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";
import { fleetContext, send } from "../support/fleet.js";

describe("the fleet's bundle address", () => {
  let ctx: FleetContext;
  let fdb: FleetDb;
  let app: Awaited<ReturnType<typeof createFleetApp>>;
  let base = "";
  beforeAll(async () => {
    ({ ctx, fdb } = await fleetContext(":memory:", systemClock));
    app = await createFleetApp(ctx);
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await app.close();
    await fdb.close();
  });

  it("is <fleet.url>/api/unit/v1/bundle, as the help says", async () => {
    expect(fleetBundleUrl("https://fleet.example.com/")).toBe("https://fleet.example.com/api/unit/v1/bundle");
    expect(fleetBundleUrl("https://h.example/fleet")).toBe("https://h.example/fleet/api/unit/v1/bundle");
    const help = await vendd(["bundle", "pull", "--help"]);
    expect(help.stdout).toContain("<fleet.url>/api/unit/v1/bundle");
  });

  it("`vendd bundle pull` with fleet.url and no updates.pullUrl fetches the unit's bundle from the fleet", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-pulladdr-"));
    const unitKey = generateUnitKey();
    const keyFile = join(dir, "fleet.key");
    writeFileSync(keyFile, unitKey.privatePem, { mode: 0o600 });
    // Enrol and approve the unit on the fleet.
    expect(
      (await send(app, unitKey, "POST", "/enroll", { unitId: "vm-pull", label: "x" }, Date.now())).status,
    ).toBe(202);
    await ctx.db.updateTable("units").set({ status: "approved" }).where("id", "=", "vm-pull").execute();
    // A bundle for it, signed by a key the unit does not trust: fetched whole, then refused (nothing changes).
    const [signer, trusted] = await Promise.all([makeKey("s"), makeKey("t")]);
    const { bundle } = createBundle({
      configText: "unit: {id: vm-pull}\n",
      release: null,
      version: 5,
      targets: ["vm-pull"],
      expires: "2031-01-01",
    });
    const stored = await storeBundle(ctx, signWith(bundle, [signer]), "ann", []);
    const raw = rawV10();
    raw.unit = { id: "vm-pull", name: "Pull" };
    raw.fleet = { url: base, keyFile };
    raw.updates = {
      publicKeys: [trusted.line],
      stateDir: join(dir, "state"),
      releaseRoot: join(dir, "opt"),
      inbox: join(dir, "inbox"),
    };
    const config = join(dir, "config.yaml");
    writeFileSync(config, JSON.stringify(raw));
    const r = await vendd(["bundle", "pull", "--config", config, "--json"], { timeoutMs: 30_000 });
    expect(r.stderr).not.toContain("pullUrl is not set");
    // The signed GET reached the fleet's bundle route as this unit: its rollout row says it fetched it.
    const row = await ctx.db
      .selectFrom("rollouts")
      .select(["bundle_id", "unit_id"])
      .where("unit_id", "=", "vm-pull")
      .executeTakeFirst();
    expect(row?.bundle_id).toBe(stored.id);
    expect(readFileSync(join(dir, "state", "pull.json"), "utf8")).toContain(stored.sha256);
  }, 60_000);
});
