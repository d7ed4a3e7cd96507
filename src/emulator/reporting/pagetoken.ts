import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Page tokens of the reporting interface (seed 002 "Pagination"): opaque standard base64 of a binary cursor,
 * so that they carry `/`, `+` and `=` and a client that forgets to URL-encode them is caught. Layout (13
 * bytes → 20 characters with `==` padding): 3 marker bytes `FB FF BF` (always encode as `+/+/`), a version
 * byte, the 32-bit offset of the next line, and 5 bytes of an HMAC (key private to this emulator instance) over
 * the query the token belongs to and the offset: a token is refused for another query, when altered, or when
 * its `+` arrived as a space.
 */
export class PageTokens {
  private readonly key = randomBytes(32);

  encode(query: string, offset: number): string {
    const buf = Buffer.alloc(13);
    buf.set([0xfb, 0xff, 0xbf, 0x01], 0);
    buf.writeUInt32BE(offset, 4);
    this.mac(query, offset).copy(buf, 8);
    return buf.toString("base64");
  }

  /** The offset a token carries for `query`, or null when it is not one of this query's tokens. */
  decode(query: string, token: string): number | null {
    if (!/^[A-Za-z0-9+/]{18}==$/.test(token)) return null;
    const buf = Buffer.from(token, "base64");
    if (buf.length !== 13 || buf[0] !== 0xfb || buf[1] !== 0xff || buf[2] !== 0xbf || buf[3] !== 0x01)
      return null;
    const offset = buf.readUInt32BE(4);
    return timingSafeEqual(buf.subarray(8), this.mac(query, offset)) ? offset : null;
  }

  private mac(query: string, offset: number): Buffer {
    return createHmac("sha256", this.key).update(`${query}\n${offset}`).digest().subarray(0, 5);
  }
}
