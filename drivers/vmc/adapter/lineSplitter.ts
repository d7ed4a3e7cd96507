/**
 * Splits a serial byte stream into lines with a hard bound on memory. Unlike a delimiter parser that
 * buffers until the next newline, a line longer than `maxLineBytes` is cut off: its bytes are dropped up to
 * the next `\n` and it is reported once as over-long (vending-mdb §2.1: one message per line ending in `\n`,
 * `\r\n` tolerated [P]).
 */
export interface SplitResult {
  /** Complete lines in arrival order, without `\r\n` / `\n`. */
  lines: string[];
  /** Number of over-long lines that ended (or were cut) in this chunk and were discarded. */
  overlong: number;
}

const NL = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  private buf: Buffer;
  private used = 0;
  private dropping = false;

  /** @param maxLineBytes longest accepted line in bytes, without its terminator (default 256). */
  constructor(readonly maxLineBytes = 256) {
    this.buf = Buffer.alloc(maxLineBytes + 1);
  }

  /** Feeds a chunk; returns the complete lines it finished. Never holds more than `maxLineBytes` + 1 bytes. */
  push(chunk: Uint8Array): SplitResult {
    const lines: string[] = [];
    let overlong = 0;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.dropping) {
        if (nl !== -1) this.dropping = false;
      } else if (this.used + (end - start) > this.maxLineBytes + 1) {
        // +1 leaves room for a trailing \r that is not part of the line.
        this.used = 0;
        overlong++;
        this.dropping = nl === -1;
      } else {
        this.buf.set(chunk.subarray(start, end), this.used);
        this.used += end - start;
        if (nl !== -1) {
          let len = this.used;
          if (len > 0 && this.buf[len - 1] === CR) len--;
          if (len > this.maxLineBytes) overlong++;
          else lines.push(this.buf.toString("latin1", 0, len));
          this.used = 0;
        }
      }
      if (nl === -1) break;
      start = nl + 1;
    }
    return { lines, overlong };
  }

  /** Discards a partial line (after a reopen, the first bytes may be the tail of an old line). */
  reset(): void {
    this.used = 0;
    this.dropping = false;
  }
}
