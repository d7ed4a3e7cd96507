import { CHECKIN_SERVICE_UUID, TEST_COMPANY_ID } from "../../src/core/devices.js";
import { BeaconError } from "./beacon.js";

/**
 * vendd's own BLE check-in advertisement (pos-v10 §15: "defines its own BLE advertisement" [P]).
 *
 * Advertising data (legacy advertising, at most 31 bytes), 21 bytes:
 *   `02 01 06`                       Flags: LE General Discoverable, BR/EDR not supported
 *   `11 07 <16 bytes>`               Complete List of 128-bit Service UUIDs: the check-in service UUID,
 *                                    least significant byte first (Core Spec Supplement Part A §1.1)
 * Scan response (at most 31 bytes), 13 bytes for a 15-digit id, 21 bytes for a GUID:
 *   `<len> FF <company lo> <company hi> <format> <id bytes>`   Manufacturer Specific Data
 *     format 0x01: a 15-digit beaconId as 8 bytes of packed BCD, most significant digit first, padded
 *                  with a final 0xF nibble
 *     format 0x02: a GUID beaconId as its 16 bytes in text order (RFC 9562 network byte order)
 *
 * Why this split: the 128-bit service UUID (18 bytes) and a GUID in manufacturer data (21 bytes) do not
 * fit one 31-byte packet together, and the service UUID belongs in the primary packet because phones
 * filter background scans by service UUID. The app scans actively (it does in the foreground) to get the
 * id from the scan response. Both id forms fit with room to spare (18 and 10 bytes free).
 * The company id 0xFFFF is the Bluetooth SIG's value for tests; a fleet with its own assigned company id
 * configures it.
 */
export { CHECKIN_SERVICE_UUID, TEST_COMPANY_ID };

/** Legacy advertising PDUs carry at most 31 bytes of data each. */
export const MAX_AD_BYTES = 31;

const DIGITS = /^\d{15}$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AdvertisementOptions {
  /** The service UUID in the primary packet (default `CHECKIN_SERVICE_UUID`). */
  serviceUuid?: string;
  /** The 16-bit company identifier of the manufacturer data (default 0xFFFF, the test value). */
  companyId?: number;
}

export interface Advertisement {
  advertisement: Buffer;
  scanResponse: Buffer;
}

/** Encodes a beaconId (pos-v10 §14: exactly 15 digits, or a GUID). */
export function encodeAdvertisement(beaconId: string, o: AdvertisementOptions = {}): Advertisement {
  const uuid = o.serviceUuid ?? CHECKIN_SERVICE_UUID;
  const company = o.companyId ?? TEST_COMPANY_ID;
  if (!GUID.test(uuid)) throw new BeaconError("invalidId", "service UUID must be a 128-bit UUID");
  if (!Number.isInteger(company) || company < 0 || company > 0xffff) {
    throw new BeaconError("invalidId", "company id must be a 16-bit integer");
  }
  const uuidLe = Buffer.from(uuid.replaceAll("-", ""), "hex").reverse();
  const advertisement = Buffer.concat([Buffer.from([0x02, 0x01, 0x06, 0x11, 0x07]), uuidLe]);
  const [format, id] = idBytes(beaconId);
  const head = Buffer.from([4 + id.length, 0xff, company & 0xff, company >> 8, format]);
  return { advertisement, scanResponse: Buffer.concat([head, id]) };
}

function idBytes(beaconId: string): [number, Buffer] {
  if (DIGITS.test(beaconId)) return [0x01, Buffer.from(`${beaconId}f`, "hex")];
  if (GUID.test(beaconId)) return [0x02, Buffer.from(beaconId.replaceAll("-", ""), "hex")];
  throw new BeaconError("invalidId", "beaconId must be exactly 15 digits or a GUID");
}

/**
 * Reads the beaconId back from a scan response (what a scanner does), lower-case like the QR payload;
 * null when no manufacturer data of `companyId` in a known format is present.
 */
export function decodeBeaconId(scanResponse: Buffer, companyId = TEST_COMPANY_ID): string | null {
  for (let at = 0; at < scanResponse.length; ) {
    const len = scanResponse[at] ?? 0;
    if (len === 0) break;
    const ad = scanResponse.subarray(at + 1, at + 1 + len);
    at += 1 + len;
    if (ad.length !== len || len < 4 || ad[0] !== 0xff || ad.readUInt16LE(1) !== companyId) continue;
    const body = ad.subarray(4).toString("hex");
    if (ad[3] === 0x01 && body.length === 16 && /^\d{15}f$/.test(body)) return body.slice(0, 15);
    if (ad[3] === 0x02 && body.length === 32) {
      return `${body.slice(0, 8)}-${body.slice(8, 12)}-${body.slice(12, 16)}-${body.slice(16, 20)}-${body.slice(20)}`;
    }
  }
  return null;
}
