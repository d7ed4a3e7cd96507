/** Signed bundles on the fleet, as other features reach them: the unit API serves and marks them. */
export { bundleBytes, bundleIndex, markPending, newestBundleFor } from "./store.js";
