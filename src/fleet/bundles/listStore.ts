/**
 * Bundles and their rollouts for the dashboard, with per-state counts; optionally only those rolled out to
 * one unit.
 */
import type { FleetContext } from "../context.js";
import type { BundleSummary, RolloutRow } from "./rows.js";

export type { BundleSummary, RolloutRow };

function parseTargets(text: string): string[] {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.map((t) => String(t)) : [text];
  } catch {
    return [text];
  }
}

export async function listBundles(ctx: FleetContext, unit?: string): Promise<BundleSummary[]> {
  const bundles = await ctx.db
    .selectFrom("bundles")
    .select([
      "id",
      "kind",
      "version",
      "targets",
      "expires_at",
      "sha256",
      "size",
      "uploaded_by",
      "uploaded_at",
      "verified",
    ])
    .orderBy("uploaded_at", "desc")
    .orderBy("id")
    .execute();
  let rq = ctx.db
    .selectFrom("rollouts")
    .select(["bundle_id", "unit_id", "state", "reason", "updated_at"])
    .orderBy("bundle_id")
    .orderBy("unit_id");
  if (unit !== undefined) rq = rq.where("unit_id", "=", unit);
  const rollouts = await rq.execute();
  const out = bundles.map(
    (b): BundleSummary => ({
      id: b.id,
      kind: b.kind,
      version: b.version,
      targets: parseTargets(b.targets),
      expiresAt: b.expires_at === null ? null : Number(b.expires_at),
      sha256: b.sha256,
      size: Number(b.size),
      uploadedBy: b.uploaded_by,
      uploadedAt: Number(b.uploaded_at),
      verified: Number(b.verified) === 1,
      counts: { pending: 0, applied: 0, rolledBack: 0 },
      rollouts: [],
    }),
  );
  const byId = new Map(out.map((b) => [b.id, b]));
  for (const r of rollouts) {
    const b = byId.get(r.bundle_id);
    if (b === undefined) continue;
    b.rollouts.push({
      bundleId: r.bundle_id,
      unitId: r.unit_id,
      state: r.state,
      reason: r.reason,
      updatedAt: Number(r.updated_at),
    });
    if (r.state === "pending" || r.state === "applied" || r.state === "rolledBack") b.counts[r.state] += 1;
  }
  return unit === undefined ? out : out.filter((b) => b.rollouts.length > 0);
}
