/**
 * Signed bundles on the fleet: the bundles page (every dashboard's), the managers' upload form (the
 * composed server's); the unit API serves and marks them.
 */
import type { FleetFeature } from "../feature.js";
import { mountBundlePages, mountBundleUpload } from "./routes.js";

export { type BundleSummary, listBundles, type RolloutRow } from "./listStore.js";
export {
  bundleBytes,
  bundleIndex,
  markPending,
  newestBundleFor,
  type RolloutGate,
  targetsUnit,
} from "./store.js";
export { rolloutCounts } from "./views.js";

/** The bundles page alone: the dashboard of `vendd fleet demo` and of the tests, which take no uploads. */
export const bundleListFeature: FleetFeature = {
  name: "bundles",
  pages: (web, ctx, t) => mountBundlePages(web, ctx, t),
};

/** The bundles page and the upload form (`/bundles/upload`), as `vendd fleet serve` mounts them. */
export const bundlesFeature: FleetFeature = {
  name: "bundles",
  pages: async (web, ctx, t, p) => {
    mountBundlePages(web, ctx, t);
    await mountBundleUpload(web, ctx, t, p);
  },
};
