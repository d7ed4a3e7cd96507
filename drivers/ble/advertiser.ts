import type { Logger } from "pino";
import type { Clock, Timer } from "../../src/core/clock.js";
import { type AdvertisementOptions, encodeAdvertisement } from "./advertisement.js";
import { type BeaconAdvertiser, BeaconError, type BeaconKind, type BeaconState } from "./beacon.js";

/**
 * The surface of bleno (@abandonware/bleno) this beacon uses; the sim radio implements it too.
 * bleno quirk: a failed start emits `advertisingStartError` and never calls the start callback.
 */
export interface RadioLike {
  readonly state: string;
  on(event: "stateChange" | "advertisingStartError", fn: (arg: unknown) => void): unknown;
  removeListener(event: "stateChange" | "advertisingStartError", fn: (arg: unknown) => void): unknown;
  startAdvertisingWithEIRData(
    advertisement: Buffer,
    scanData: Buffer,
    cb: (err?: Error | null) => void,
  ): void;
  stopAdvertising(cb?: () => void): void;
}

export interface AdvertiserOptions extends AdvertisementOptions {
  clock: Clock;
  /** How long a start or stop may take before it counts as failed (ms, default 5,000). */
  commandTimeoutMs?: number;
  /** Delay before retrying a refused advertisement while the adapter is on (ms, default 30,000). */
  retryMs?: number;
  logger?: Logger;
}

/** Hints for adapter states that need an operator (reliability §3.3: BLE needs CAP_NET_RAW/CAP_NET_ADMIN). */
const HINTS: Record<string, string> = {
  unauthorized: "adapter unauthorized (the service needs CAP_NET_RAW and CAP_NET_ADMIN)",
  unsupported: "adapter does not support BLE advertising",
  poweredOff: "adapter powered off",
};

/** One radio command with a deadline: `fn` calls `done` (with an error when it failed). */
type RadioCall = (what: string, fn: (done: (err?: unknown) => void) => void) => Promise<void>;

function radioCall(
  clock: Clock,
  timeoutMs: number,
  what: string,
  fn: (done: (err?: unknown) => void) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = clock.setTimer(timeoutMs, () => reject(new Error(`${what} timed out`)));
    const done = (err?: unknown) => {
      timer.cancel();
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve();
    };
    try {
      fn(done);
    } catch (err) {
      done(err);
    }
  });
}

/** Starts advertising `ad`; rejects when the radio refuses (bleno's start error event, or the deadline). */
async function startAdvertising(
  radio: RadioLike,
  ad: { advertisement: Buffer; scanResponse: Buffer },
  call: RadioCall,
): Promise<void> {
  const onError = (err: unknown) => failStart?.(err);
  let failStart: ((err: unknown) => void) | null = null;
  radio.on("advertisingStartError", onError);
  try {
    await call("advertising start", (done) => {
      failStart = done;
      radio.startAdvertisingWithEIRData(ad.advertisement, ad.scanResponse, done);
    });
  } finally {
    radio.removeListener("advertisingStartError", onError);
  }
}

/** Listens to the adapter's state; null, or why the adapter is not available. */
function listenToAdapter(radio: RadioLike, onStateChange: (arg: unknown) => void): string | null {
  try {
    radio.on("stateChange", onStateChange);
    return null;
  } catch (err) {
    // bleno opens the HCI socket when the first stateChange listener is added; that may throw.
    return `adapter not available: ${String(err)}`;
  }
}

/**
 * A beacon over a bleno-like radio, or over no radio at all (`radio` null: the module could not be
 * loaded; `unavailable` says why): then it is `degraded` whenever asked to advertise.
 */
export function createRadioAdvertiser(
  kind: BeaconKind,
  radio: RadioLike | null,
  unavailable: string,
  o: AdvertiserOptions,
): BeaconAdvertiser {
  const listeners = new Set<(s: BeaconState, r: string | null) => void>();
  const timeoutMs = o.commandTimeoutMs ?? 5_000;
  let current: BeaconState = "stopped";
  let why: string | null = null;
  let wanted: { advertisement: Buffer; scanResponse: Buffer } | null = null;
  let retry: Timer | null = null;
  let closed = false;
  let chain: Promise<void> = Promise.resolve();

  const set = (s: BeaconState, r: string | null) => {
    if (s === current && r === why) return;
    current = s;
    why = r;
    if (s === "degraded") o.logger?.warn({ reason: r }, "ble: beacon degraded");
    else o.logger?.info({ state: s }, "ble: beacon state");
    for (const l of [...listeners]) l(s, r);
  };
  const queue = (step: () => Promise<void>): Promise<void> => {
    chain = chain.then(step, step);
    return chain;
  };
  const call: RadioCall = (what, fn) => radioCall(o.clock, timeoutMs, what, fn);

  const advertise = async () => {
    retry?.cancel();
    retry = null;
    if (wanted === null || closed) return;
    if (radio === null) return set("degraded", unavailable);
    if (radio.state !== "poweredOn") return set("degraded", HINTS[radio.state] ?? `adapter ${radio.state}`);
    try {
      await startAdvertising(radio, wanted, call);
      set("advertising", null);
    } catch (err) {
      set("degraded", `advertising refused: ${err instanceof Error ? err.message : String(err)}`);
      if (!closed) retry = o.clock.setTimer(o.retryMs ?? 30_000, () => void queue(advertise));
    }
  };

  const halt = async () => {
    retry?.cancel();
    retry = null;
    if (radio !== null && current === "advertising") {
      await call("advertising stop", (done) => radio.stopAdvertising(() => done())).catch((err: unknown) =>
        o.logger?.warn({ err }, "ble: stop not confirmed"),
      );
    }
    set("stopped", null);
  };

  const onStateChange = (arg: unknown) => {
    o.logger?.info({ adapter: String(arg) }, "ble: adapter state");
    if (wanted === null) return;
    if (arg === "poweredOn") void queue(advertise);
    else set("degraded", HINTS[String(arg)] ?? `adapter ${String(arg)}`);
  };
  const refused = radio === null ? null : listenToAdapter(radio, onStateChange);
  if (refused !== null) return createRadioAdvertiser(kind, null, refused, o);

  return {
    kind,
    async start(beaconId) {
      if (closed) throw new BeaconError("closed", "beacon is closed");
      const next = encodeAdvertisement(beaconId, o);
      const same = wanted?.scanResponse.equals(next.scanResponse) === true;
      wanted = next;
      await queue(async () => {
        if (same && current === "advertising") return;
        if (current === "advertising" && radio !== null) await halt();
        await advertise();
      });
    },
    async stop() {
      wanted = null;
      await queue(halt);
    },
    state: () => current,
    reason: () => why,
    onStateChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      if (closed) return;
      wanted = null;
      await queue(halt);
      closed = true;
      radio?.removeListener("stateChange", onStateChange);
      listeners.clear();
    },
  };
}
