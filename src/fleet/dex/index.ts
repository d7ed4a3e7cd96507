/**
 * DEX audits (issue 36): the composition mounts the page and its CSV; ingest stores each DEX read a unit
 * sends.
 */
import type { FleetFeature } from "../feature.js";
import { mountDexPages } from "./routes.js";

export { g85Mark, lastReadOf, storeDexRead } from "./store.js";

export const dexFeature: FleetFeature = {
  name: "dex",
  pages: (web, ctx, t, p) => mountDexPages(web, ctx, t, p),
  nav: [["/dex", "DEX audits"]],
};
