/**
 * CRC-16/ARC, the one checksum of DEX/UCS blocks and of the EVA-DTS G85 segment (dex.md §3): polynomial
 * 0x8005 reflected (0xA001), initial value 0, input and output reflected, no final xor.
 * Check value: "123456789" gives 0xBB3D.
 */

const TABLE: Uint16Array = (() => {
  const t = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xa001 : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/**
 * Continues a CRC-16/ARC over `bytes` from `crc` (0 to start).
 * @returns the 16-bit CRC.
 */
export function crc16(bytes: Uint8Array, crc = 0): number {
  let c = crc & 0xffff;
  for (const b of bytes) c = ((c >>> 8) ^ (TABLE[(c ^ b) & 0xff] ?? 0)) & 0xffff;
  return c;
}

/** CRC-16/ARC of a latin1 string. */
export function crc16Text(text: string, crc = 0): number {
  return crc16(Buffer.from(text, "latin1"), crc);
}
