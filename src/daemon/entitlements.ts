/**
 * Member entitlements at the unit (issue 18): the signed entitlement list the fleet sends, kept on disk and
 * verified with the entitlement key the config names (never a config or release key), and the member gate
 * that turns a badge tap into a plan-vend decision for the next vend request. The decision is local: a
 * list in force (verified, not expired) and the journal's usage counts; no network in that path.
 *
 * A badge's UID never leaves this module's call that hashes it: the store is given the normalised UID only
 * inside `lookup` (one scrypt per tap, with the list's badge salt) and keeps, logs and journals the hash
 * and the member id only.
 *
 * Split by flow: the list store (entitlementStore.ts), the member gate (memberGate.ts), the fetch from the
 * fleet (entitlementFetch.ts); this module re-exports them for its importers.
 */
export { type FetchResult, fetchEntitlements } from "./entitlementFetch.js";
export {
  EntitlementStore,
  loadEntitlementKey,
  SignedList,
  StaleListError,
  type StoreOptions,
} from "./entitlementStore.js";
export { type GateOptions, MemberGate, periodsOf, withinAllowance } from "./memberGate.js";
