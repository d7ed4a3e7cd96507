import { NfcError } from "./errors.js";
import { decodeNdefUri, encodeNdefUri, PAGE_BYTES } from "./ndef.js";

/** The block I/O of a reader with a tag present (nfc-pcsc's `reader.read` / `reader.write`). */
export interface TagIo {
  read(block: number, length: number, blockSize?: number): Promise<Buffer>;
  write(block: number, data: Buffer, blockSize?: number): Promise<void>;
}

/** First page of the data area on an NFC Forum Type 2 tag; page 3 is the capability container (CC). */
export const FIRST_DATA_PAGE = 4;

/**
 * Writes the check-in URI to a Type 2 tag (NTAG213: 144 data bytes, NTAG215: 504, NTAG216: 888) and reads
 * it back. Checks the CC first: magic 0xE1, write access (low nibble of byte 3) 0, data area size (CC byte 2 × 8) large
 * enough. Returns the number of bytes written.
 * @throws NfcError notNdef | readOnly | tooLong | verifyFailed | io
 */
export async function writeUriTag(tag: TagIo, uri: string): Promise<number> {
  const data = encodeNdefUri(uri);
  const cc = await io("read the capability container", () => tag.read(3, PAGE_BYTES, PAGE_BYTES));
  if (cc[0] !== 0xe1) throw new NfcError("notNdef", "tag has no NDEF capability container");
  if (((cc[3] ?? 0xff) & 0x0f) !== 0) throw new NfcError("readOnly", "tag is write-protected");
  const capacity = (cc[2] ?? 0) * 8;
  if (data.length > capacity) {
    throw new NfcError("tooLong", `check-in record needs ${data.length} bytes, tag has ${capacity}`);
  }
  await io("write", () => tag.write(FIRST_DATA_PAGE, data, PAGE_BYTES));
  const back = await io("read back", () => tag.read(FIRST_DATA_PAGE, data.length, PAGE_BYTES));
  if (!back.equals(data) || decodeNdefUri(back) !== uri) {
    throw new NfcError("verifyFailed", "tag content differs from what was written");
  }
  return data.length;
}

async function io<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new NfcError("io", `tag ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
