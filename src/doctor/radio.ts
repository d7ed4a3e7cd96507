/** Checks of the radios: the BLE adapter (through the beacon's state) and the PC/SC reader. */

import type { BeaconAdvertiser } from "../../drivers/ble/beacon.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import type { VenddConfig } from "../config/load.js";
import { configuredBeaconId } from "../config/seams.js";
import type { Clock } from "../core/clock.js";
import type { DoctorDeps } from "./deps.js";
import { type Check, messageOf } from "./run.js";

/** Advertised for the check when no beaconId is configured yet: 15 digits, unmistakably not a unit's. */
export const PROBE_BEACON_ID = "000000000000000";

const BLE_TIMEOUT_MS = 6000;
const NFC_TIMEOUT_MS = 5000;

/**
 * Resolves true once `ready()` holds, false after `ms`; re-evaluated on every `subscribe` notification.
 * Bounded by the timer, so it never waits longer than `ms`.
 */
function waitUntil(
  clock: Clock,
  ms: number,
  ready: () => boolean,
  subscribe: (fn: () => void) => () => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (ready()) return resolve(true);
    const timer = clock.setTimer(ms, () => {
      off();
      resolve(false);
    });
    const off = subscribe(() => {
      if (!ready()) return;
      timer.cancel();
      off();
      resolve(true);
    });
  });
}

function bleHint(reason: string): string {
  if (reason.includes("EAFNOSUPPORT")) {
    return "the kernel offers no Bluetooth here (EAFNOSUPPORT): is the adapter enabled (dtoverlay, rfkill) and bluetooth loaded?";
  }
  if (reason.includes("module not available"))
    return "install @abandonware/bleno (an optional dependency) on the device";
  if (reason.includes("unauthorized"))
    return "give the service CAP_NET_RAW and CAP_NET_ADMIN (AmbientCapabilities=)";
  if (reason.includes("powered off"))
    return "power the adapter on (rfkill unblock bluetooth; bluetoothctl power on)";
  return "check the adapter (bluetoothctl show; hciconfig) and that bluetoothd does not hold it";
}

/** The adapter is powered and accepts the check-in advertisement (F's beacon state); stopped afterwards. */
export function bleCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const id = configuredBeaconId(config);
  return {
    name: "ble",
    timeoutMs: BLE_TIMEOUT_MS + 2000,
    timeoutHint: bleHint(""),
    async run() {
      let beacon: BeaconAdvertiser | null = null;
      try {
        const b = await deps.openBeacon(config);
        beacon = b;
        await b.start(id ?? PROBE_BEACON_ID);
        // A missing module never recovers: no point in waiting for it.
        const hopeless = () => (b.reason() ?? "").includes("module not available");
        await waitUntil(
          deps.clock,
          BLE_TIMEOUT_MS,
          () => b.state() === "advertising" || hopeless(),
          (fn) => b.onStateChange(() => fn()),
        );
        if (b.state() === "advertising") {
          const which = id === null ? "probe id; no beaconId configured yet" : "the unit's beaconId";
          return {
            status: "ok",
            detail: `${config.ble.kind} adapter powered, advertising accepted (${which})`,
          };
        }
        const reason = b.reason() ?? `beacon ${b.state()}`;
        return { status: "fail", detail: `${reason}: ${bleHint(reason)}` };
      } catch (err) {
        return { status: "fail", detail: `${messageOf(err)}: ${bleHint(messageOf(err))}` };
      } finally {
        await beacon?.close().catch(() => {});
      }
    },
  };
}

/**
 * The nfc row's sentence for a degraded station: the driver's own reason when it names what to do (a
 * missing libpcsclite.so.1, a module built for another CPU or Node.js, no pcscd), the general PC/SC hint
 * otherwise.
 */
function nfcDegraded(reason: string | null): string {
  const own = ["libpcsclite.so", "install the release", "pcscd is not running"];
  if (reason !== null && own.some((s) => reason.includes(s))) return reason;
  const why = reason === null ? "" : ` (${reason})`;
  return `PC/SC not available${why}: install pcscd and nfc-pcsc (an optional dependency) and start pcscd (systemctl enable --now pcscd)`;
}

/**
 * A station that will not find a reader while the row waits: the module cannot load, or no pcscd listens
 * (the driver does not hand nfc-pcsc a missing service: its constructor would never return).
 */
function hopelessNfc(reason: string): boolean {
  return (
    reason.startsWith("module not available") ||
    reason.startsWith("pcscd is not running") ||
    reason.includes("install the release")
  );
}

/** A PC/SC reader is present (the station reports `connected`). */
export function nfcCheck(config: VenddConfig, deps: DoctorDeps): Check {
  return {
    name: "nfc",
    timeoutMs: NFC_TIMEOUT_MS + 2000,
    timeoutHint: "pcscd does not answer: systemctl status pcscd",
    async run() {
      let station: NfcStation | null = null;
      try {
        const s = await deps.openNfc(config);
        station = s;
        // A module that cannot load, or no pcscd: no point in waiting for a reader.
        const hopeless = () => hopelessNfc(s.reason() ?? "");
        const up = await waitUntil(
          deps.clock,
          NFC_TIMEOUT_MS,
          () => s.readerState() === "connected" || hopeless(),
          (fn) => s.onReaderState(() => fn()),
        );
        if (up && s.readerState() === "connected")
          return { status: "ok", detail: `${config.nfc.kind} reader present` };
        if (s.readerState() === "degraded") return { status: "fail", detail: nfcDegraded(s.reason()) };
        return {
          status: "fail",
          detail: "no reader found: is the USB reader plugged in? (pcsc_scan lists readers)",
        };
      } catch (err) {
        return { status: "fail", detail: `${messageOf(err)}: check the nfc section` };
      } finally {
        await station?.close().catch(() => {});
      }
    },
  };
}
