/**
 * The fleet's unit API (issue 16), in process (Fastify's inject), on SQLite and on a real PostgreSQL that
 * the file starts: bundles (stored only when signed by a trusted key, served to their targets by
 * conditional GET, by unit id or by the fleet a heartbeat names) and rollouts (pending → applied |
 * rolledBack from the units' version events).
 */
import type { FastifyInstance } from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/core/clock.js";
import { BundleUploadError, storeBundle } from "../../src/fleet/bundles/store.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { createBundle, trustedCommentOf } from "../../src/update/bundle.js";
import { parsePublicKey } from "../../src/update/minisign.js";
import { makeKey, signWith, type TestKey } from "../../src/update/update.test-support.js";
import { send } from "../support/fleet.js";
import { heartbeat, T0, unitApiOn } from "../support/fleetUnitApi.js";

let signer: TestKey;
let stranger: TestKey;

beforeAll(async () => {
  [signer, stranger] = await Promise.all([makeKey("fleet-test"), makeKey("other")]);
}, 30_000);

describe.each(["sqlite", "postgres"] as const)("fleet unit API on %s", (dialect) => {
  let clock: ManualClock;
  let ctx: FleetContext;
  let app: FastifyInstance;
  const { post, approved } = unitApiOn(dialect, { dbPrefix: "bundles" }, (s) => {
    ({ clock, ctx, app } = s);
  });

  it("bundles: one targeting a fleet name goes to the units whose heartbeat names that fleet", async () => {
    const inFleet = await approved("vm-0101");
    const elsewhere = await approved("vm-0102");
    const { bundle } = createBundle({
      configText: "unit: {id: any}\n",
      release: null,
      version: 3,
      targets: ["lobby-fleet"],
      expires: "2031-01-01",
    });
    const stored = await storeBundle(ctx, signWith(bundle, [signer]), "ann", [
      parsePublicKey(signer.publicKeyText),
    ]);
    const etagOfHeartbeat = async (unit: typeof inFleet, fleet: string | null) =>
      ((await post(unit, "/heartbeat", { ...heartbeat(unit.id), fleet })).json as { bundleEtag: unknown })
        .bundleEtag;
    expect(await etagOfHeartbeat(inFleet, "lobby-fleet")).toBe(`"${stored.sha256}"`);
    expect(await etagOfHeartbeat(elsewhere, "other-fleet")).toBeNull();
    // GET /bundle goes by the fleet the unit's last heartbeat named.
    expect((await send(app, inFleet.key, "GET", "/bundle", undefined, clock.now())).status).toBe(200);
    expect((await send(app, elsewhere.key, "GET", "/bundle", undefined, clock.now())).status).toBe(404);
  });

  it("bundles: stored when signed, newest for the unit by conditional GET, rollout pending → applied | rolledBack", async () => {
    const u = await approved("vm-0001");
    const other = await approved("vm-0002");
    const { bundle, manifest } = createBundle({
      configText: "unit: {id: vm-0001}\n",
      release: null,
      version: 8,
      targets: ["vm-0001", "vm-0003"],
      expires: "2031-01-01",
    });
    const refusal = async (bytes: Buffer, keys: TestKey[] = []) => {
      try {
        await storeBundle(
          ctx,
          bytes,
          "ann",
          keys.length === 0 ? undefined : keys.map((k) => parsePublicKey(k.publicKeyText)),
        );
        return "stored";
      } catch (err) {
        if (err instanceof BundleUploadError) return err.code;
        throw err;
      }
    };
    expect(await refusal(bundle)).toBe("unsigned");
    expect(["not_a_bundle", "truncated"]).toContain(await refusal(Buffer.from("not a bundle at all")));
    const another = createBundle({
      configText: "unit: {id: vm-0001}\n",
      release: null,
      version: 9,
      targets: ["vm-0001"],
      expires: "2031-01-01",
    });
    expect(await refusal(signWith(bundle, [signer], trustedCommentOf(another.manifest)))).toBe(
      "another_file",
    );
    const tooNew = trustedCommentOf({ ...manifest, version: 99 });
    expect(await refusal(signWith(bundle, [signer], tooNew))).toBe("comment_mismatch");
    const signedBundle = signWith(bundle, [signer]);
    expect(await refusal(signedBundle, [stranger])).toBe("unknown_key");
    // `vendd fleet serve --bundle-key` keys are storeBundle's default (the dashboard's upload uses it).
    ctx.bundleKeys = [parsePublicKey(stranger.publicKeyText)];
    expect(await refusal(signedBundle)).toBe("unknown_key");
    ctx.bundleKeys = undefined;
    expect(await ctx.db.selectFrom("bundles").select("id").execute()).toEqual([]);
    const stored = await storeBundle(ctx, signedBundle, "ann", [parsePublicKey(signer.publicKeyText)]);
    expect(stored).toMatchObject({ id: manifest.id, kind: "config", version: "8", created: true });
    expect((await storeBundle(ctx, signedBundle, "ann")).created).toBe(false);

    const hb = await post(u, "/heartbeat", heartbeat(u.id));
    const etag = `"${stored.sha256}"`;
    expect((hb.json as { bundleEtag: string }).bundleEtag).toBe(etag);
    expect(
      ((await post(other, "/heartbeat", heartbeat(other.id))).json as { bundleEtag: unknown }).bundleEtag,
    ).toBeNull();
    expect((await send(app, other.key, "GET", "/bundle", undefined, clock.now())).status).toBe(404);

    const got = await send(app, u.key, "GET", "/bundle", undefined, clock.now());
    expect(got.status).toBe(200);
    expect(got.headers.etag).toBe(etag);
    expect(got.headers["content-type"]).toBe("application/octet-stream");
    expect(got.raw.equals(signedBundle)).toBe(true);
    const again = await send(app, u.key, "GET", "/bundle", undefined, clock.now(), { "if-none-match": etag });
    expect(again.status).toBe(304);
    const rollout = () =>
      ctx.db
        .selectFrom("rollouts")
        .select(["state", "reason"])
        .where("unit_id", "=", u.id)
        .executeTakeFirstOrThrow();
    expect(await rollout()).toEqual({ state: "pending", reason: "" });

    const version = (seq: number, outcome: "applied" | "rolledBack", reason: string) => ({
      seq,
      at: T0,
      kind: "version" as const,
      data: { kind: "config" as const, bundleId: manifest.id, version: "8", outcome, reason },
    });
    await post(u, "/events", { unitId: u.id, events: [version(1, "applied", "")] });
    expect(await rollout()).toEqual({ state: "applied", reason: "" });
    const why = "health gate: VMC link down 90 s; it's \"down\" -- '; DROP TABLE rollouts; --";
    await post(u, "/events", { unitId: u.id, events: [version(2, "rolledBack", why)] });
    expect(await rollout()).toEqual({ state: "rolledBack", reason: why });
    const unit = await ctx.db
      .selectFrom("units")
      .select("config_version")
      .where("id", "=", u.id)
      .executeTakeFirstOrThrow();
    expect(unit.config_version).toBe("8");
  });
});
