/**
 * What a unit runs, in words, for the dashboard and `vendd fleet units` alike: the versions its last applied
 * bundles set, else what its heartbeat names (the vendd package it runs, the config it was installed with);
 * null before any heartbeat (each caller shows its own dash).
 */
import type { UnitSummary } from "./rows.js";

type Versions = Pick<UnitSummary, "configVersion" | "releaseVersion" | "venddVersion">;

/** The config version: its last applied config bundle, or "as installed". */
export function configShown(u: Versions): string | null {
  if (u.configVersion !== null) return u.configVersion;
  return u.venddVersion === null ? null : "as installed";
}

/** The release: its last applied release bundle, else the vendd version its heartbeat names. */
export function releaseShown(u: Versions): string | null {
  if (u.releaseVersion !== null) return u.releaseVersion;
  return u.venddVersion === null ? null : `vendd ${u.venddVersion}`;
}
