/** The DEX port check (issue 36): a handshake with the machine's DEX jack, no audit read. */
import type { VenddConfig } from "../config/load.js";
import type { DoctorDeps } from "./deps.js";
import { type Check, messageOf } from "./run.js";

const HINT =
  "is the USB-RS232 adapter on the machine's DEX jack (tip = from the machine, ring = to it), and the machine idle with no credit? Set dex.device to /dev/serial/by-id/…";

/** Shakes hands with the machine (both handshakes, the data ENQ answered with EOT): nothing is read or reset. */
export function dexCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const device = config.dex.device ?? "(no device)";
  return {
    name: "dex",
    // up to 3 ENQs of 1 s, two handshakes, the late data ENQ (3 s), plus opening the port
    timeoutMs: 15_000,
    timeoutHint: `no DEX handshake on ${device}: ${HINT}`,
    async run(signal) {
      if (!deps.exists(device)) return { status: "fail", detail: `${device} does not exist: ${HINT}` };
      try {
        const hs = await deps.dexHandshake(config, signal);
        return {
          status: "ok",
          detail: `machine ${hs.vmdCommId.trim()} answered the DEX handshake on ${device} (unit as ${hs.role})`,
        };
      } catch (err) {
        return { status: "fail", detail: `no DEX handshake on ${device} (${messageOf(err)}): ${HINT}` };
      }
    },
  };
}
