/**
 * The Bluetooth LE check-in beacon: advertises the unit's `beaconId` so the wallet app can check in
 * nearby (pos-v10 §15: the Bluetooth payload was never published, so the format is this project's own;
 * see advertisement.ts). Implementations: `bleno` (the HCI socket, imported lazily) and `sim`.
 *
 * Failure semantics: a missing library, a missing, powered-off or unauthorised adapter, or a refused
 * advertisement never throws and never crashes the process: the beacon reports `degraded` with a reason
 * and recovers by itself when the adapter comes back (powered on) or a retry succeeds. `start` rejects only
 * for an invalid beaconId (`BeaconError` `invalidId`) or after `close` (`closed`).
 */
export interface BeaconAdvertiser {
  readonly kind: BeaconKind;
  /** Advertises `beaconId` (15 digits or a GUID), replacing any earlier one. Resolves once attempted. */
  start(beaconId: string): Promise<void>;
  /** Stops advertising; the beacon reports `stopped`. */
  stop(): Promise<void>;
  state(): BeaconState;
  /** Why the beacon is degraded (no secrets, no ids), or null. */
  reason(): string | null;
  /** Calls `listener` on every state change; returns the unsubscribe function. */
  onStateChange(listener: (state: BeaconState, reason: string | null) => void): () => void;
  /** Stops advertising and releases the adapter's listeners. */
  close(): Promise<void>;
}

export type BeaconKind = "bleno" | "sim";

export type BeaconState = "advertising" | "stopped" | "degraded";

export class BeaconError extends Error {
  override readonly name = "BeaconError";
  constructor(
    readonly code: "invalidId" | "closed",
    message: string,
  ) {
    super(message);
  }
}
