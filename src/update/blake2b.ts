/**
 * BLAKE2b (RFC 7693) with a chosen output length. Node's `blake2b512` digest has a fixed 64-byte output,
 * but minisign's secret-key checksum is BLAKE2b-256 (libsodium `crypto_generichash` with 32 bytes), whose
 * output length is part of the parameter block, so it is not a truncated BLAKE2b-512. Only the checksum of
 * a 74-byte key record goes through this one: speed does not matter, so it uses BigInt words. Large inputs
 * (bundle payloads) use Node's `blake2b512`.
 */

const MASK = (1n << 64n) - 1n;

const IV: readonly bigint[] = [
  0x6a09e667f3bcc908n,
  0xbb67ae8584caa73bn,
  0x3c6ef372fe94f82bn,
  0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n,
  0x9b05688c2b3e6c1fn,
  0x1f83d9abfb41bd6bn,
  0x5be0cd19137e2179n,
];

const SIGMA: readonly (readonly number[])[] = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

function rotr(x: bigint, n: bigint): bigint {
  return ((x >> n) | (x << (64n - n))) & MASK;
}

function at<T>(a: readonly T[], i: number): T {
  const v = a[i];
  if (v === undefined) throw new RangeError(`blake2b: index ${i} out of range`);
  return v;
}

function compress(h: bigint[], block: Buffer, t: bigint, last: boolean): void {
  const m: bigint[] = [];
  for (let i = 0; i < 16; i++) m.push(block.readBigUInt64LE(i * 8));
  const v = [...h, ...IV];
  v[12] = at(v, 12) ^ (t & MASK);
  v[13] = at(v, 13) ^ (t >> 64n);
  if (last) v[14] = at(v, 14) ^ MASK;
  const g = (a: number, b: number, c: number, d: number, x: bigint, y: bigint) => {
    v[a] = (at(v, a) + at(v, b) + x) & MASK;
    v[d] = rotr(at(v, d) ^ at(v, a), 32n);
    v[c] = (at(v, c) + at(v, d)) & MASK;
    v[b] = rotr(at(v, b) ^ at(v, c), 24n);
    v[a] = (at(v, a) + at(v, b) + y) & MASK;
    v[d] = rotr(at(v, d) ^ at(v, a), 16n);
    v[c] = (at(v, c) + at(v, d)) & MASK;
    v[b] = rotr(at(v, b) ^ at(v, c), 63n);
  };
  for (let r = 0; r < 12; r++) {
    const s = at(SIGMA, r % 10);
    const x = (i: number) => at(m, at(s, i));
    g(0, 4, 8, 12, x(0), x(1));
    g(1, 5, 9, 13, x(2), x(3));
    g(2, 6, 10, 14, x(4), x(5));
    g(3, 7, 11, 15, x(6), x(7));
    g(0, 5, 10, 15, x(8), x(9));
    g(1, 6, 11, 12, x(10), x(11));
    g(2, 7, 8, 13, x(12), x(13));
    g(3, 4, 9, 14, x(14), x(15));
  }
  for (let i = 0; i < 8; i++) h[i] = at(h, i) ^ at(v, i) ^ at(v, i + 8);
}

/** BLAKE2b of `data` with an `outLen`-byte digest (1-64), unkeyed. */
export function blake2b(data: Uint8Array, outLen: number): Buffer {
  if (!Number.isInteger(outLen) || outLen < 1 || outLen > 64) {
    throw new RangeError(`blake2b: output length ${outLen} is not 1-64`);
  }
  const h = [...IV];
  h[0] = at(h, 0) ^ 0x01010000n ^ BigInt(outLen);
  const input = Buffer.from(data);
  let offset = 0;
  // Every full block but the last is compressed as not-final; the last (possibly empty) block is padded.
  while (input.length - offset > 128) {
    compress(h, input.subarray(offset, offset + 128), BigInt(offset + 128), false);
    offset += 128;
  }
  const last = Buffer.alloc(128);
  input.copy(last, 0, offset);
  compress(h, last, BigInt(input.length), true);
  const out = Buffer.alloc(64);
  for (let i = 0; i < 8; i++) out.writeBigUInt64LE(at(h, i), i * 8);
  return out.subarray(0, outLen);
}
