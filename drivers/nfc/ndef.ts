import { NfcError } from "./errors.js";

/**
 * NDEF for the check-in URI on an NFC Forum Type 2 tag (NTAG213/215/216): the same URI as the QR code
 * (pos-v10 §15: "writes the same URI into an NDEF URI record on NFC tags" [P]).
 *
 * Layout written from page 4 (byte 0 of the data area):
 *   `03 <len>`                 NDEF Message TLV (len as one byte below 0xFF, else `FF <hi> <lo>`)
 *   `D1 01 <plen> 55 <code> <rest of URI>`   one short record: MB|ME|SR, TNF 1 (well-known), type "U"
 *   `FE`                       Terminator TLV, then zero padding to a whole 4-byte page
 * The URI prefix code abbreviates a known prefix (NFC Forum URI RTD, table 3); `servicepos://` has none,
 * so its code is 0x00 and the record carries the whole URI.
 */
export const URI_PREFIXES: readonly string[] = [
  "",
  "http://www.",
  "https://www.",
  "http://",
  "https://",
  "tel:",
  "mailto:",
  "ftp://anonymous:anonymous@",
  "ftp://ftp.",
  "ftps://",
  "sftp://",
  "smb://",
  "nfs://",
  "ftp://",
  "dav://",
  "news:",
  "telnet://",
  "imap:",
  "rtsp://",
  "urn:",
  "pop:",
  "sip:",
  "sips:",
  "tftp:",
  "btspp://",
  "btl2cap://",
  "btgoep://",
  "tcpobex://",
  "irdaobex://",
  "file://",
  "urn:epc:id:",
  "urn:epc:tag:",
  "urn:epc:pat:",
  "urn:epc:raw:",
  "urn:epc:",
  "urn:nfc:",
];

/** Bytes of one page of a Type 2 tag. */
export const PAGE_BYTES = 4;

/** Encodes `uri` as the TLV area described above, padded to whole pages. */
export function encodeNdefUri(uri: string): Buffer {
  let code = 0;
  URI_PREFIXES.forEach((prefix, i) => {
    if (prefix.length > (URI_PREFIXES[code] ?? "").length && uri.startsWith(prefix)) code = i;
  });
  const rest = Buffer.from(uri.slice((URI_PREFIXES[code] ?? "").length), "utf8");
  const payloadLength = 1 + rest.length;
  if (payloadLength > 255)
    throw new NfcError("tooLong", `URI of ${uri.length} characters exceeds a short record`);
  const record = Buffer.concat([Buffer.from([0xd1, 0x01, payloadLength, 0x55, code]), rest]);
  const lengthField =
    record.length < 0xff
      ? Buffer.from([record.length])
      : Buffer.from([0xff, record.length >> 8, record.length & 0xff]);
  const tlv = Buffer.concat([Buffer.from([0x03]), lengthField, record, Buffer.from([0xfe])]);
  const padded = Buffer.alloc(Math.ceil(tlv.length / PAGE_BYTES) * PAGE_BYTES);
  tlv.copy(padded);
  return padded;
}

/**
 * Reads the first URI record of the first NDEF message in a Type 2 tag data area; skips NULL, Lock and
 * Memory Control TLVs. Returns null for anything else (empty tag, other record types, truncated data).
 */
export function decodeNdefUri(area: Buffer): string | null {
  let at = 0;
  while (at < area.length) {
    const t = area[at];
    if (t === 0x00) {
      at++;
      continue;
    }
    if (t === undefined || t === 0xfe) return null;
    let len = area[at + 1];
    let start = at + 2;
    if (len === 0xff) {
      len = area.length >= at + 4 ? area.readUInt16BE(at + 2) : undefined;
      start = at + 4;
    }
    if (len === undefined || start + len > area.length) return null;
    if (t === 0x03) return uriRecord(area.subarray(start, start + len));
    at = start + len;
  }
  return null;
}

function uriRecord(msg: Buffer): string | null {
  const header = msg[0];
  if (header === undefined || (header & 0x07) !== 0x01 || (header & 0x10) === 0) return null;
  const typeLength = msg[1];
  const payloadLength = msg[2];
  const idLength = header & 0x08 ? (msg[3] ?? 0) : 0;
  const typeAt = 3 + (header & 0x08 ? 1 : 0);
  if (typeLength !== 1 || payloadLength === undefined || msg[typeAt] !== 0x55) return null;
  const payload = msg.subarray(typeAt + 1 + idLength, typeAt + 1 + idLength + payloadLength);
  const code = payload[0];
  if (payload.length !== payloadLength || code === undefined) return null;
  const prefix = URI_PREFIXES[code];
  return prefix === undefined ? null : prefix + payload.subarray(1).toString("utf8");
}
