import type { RolloutsTable } from "../db/schema.js";

/** The shapes of the bundle list the dashboard reads (listStore.ts reads it, views.ts renders it). */

export interface RolloutRow {
  bundleId: string;
  unitId: string;
  /** db/schema.ts RolloutsTable's states (issue 41 added a rollout's). */
  state: RolloutsTable["state"];
  reason: string;
  updatedAt: number;
}

export interface BundleSummary {
  id: string;
  kind: "config" | "release";
  version: string;
  targets: string[];
  expiresAt: number | null;
  sha256: string;
  size: number;
  uploadedBy: string;
  uploadedAt: number;
  /** Whether the fleet checked its signature against its bundle keys at upload. */
  verified: boolean;
  counts: { pending: number; applied: number; rolledBack: number };
  rollouts: RolloutRow[];
}
