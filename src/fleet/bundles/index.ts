/**
 * Signed bundles on the fleet: the composition mounts the managers' upload form; the unit API serves and
 * marks them.
 */
import type { FleetFeature } from "../feature.js";
import { mountBundleUpload } from "./routes.js";

export { bundleBytes, bundleIndex, markPending, newestBundleFor } from "./store.js";

export const bundlesFeature: FleetFeature = {
  name: "bundles",
  pages: (web, ctx, t, p) => mountBundleUpload(web, ctx, t, p),
};
