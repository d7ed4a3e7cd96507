/**
 * One side of a DEX/UCS line: what arrives, read as control tokens and framed blocks (with Timer B inside
 * a block and DLE SYN fillers skipped), and what is sent, never sooner than the standard's 10 ms.
 * Shared by the reader and the VMC-side simulator.
 */
import type { Clock } from "../../src/core/clock.js";
import type { ByteQueue } from "./byteQueue.js";
import {
  DexError,
  type DexTimers,
  DLE,
  ENQ,
  EOT,
  ETB,
  ETX,
  frameCrc,
  MAX_BLOCK_BYTES,
  NAK,
  SOH,
  STX,
  SYN,
} from "./protocol.js";

export type Token =
  | { t: "ack"; n: 0 | 1 }
  | { t: "wack" }
  | { t: "nak" }
  | { t: "enq" }
  | { t: "eot" }
  | { t: "frame"; start: typeof SOH | typeof STX };

export interface Frame {
  payload: Buffer;
  end: typeof ETB | typeof ETX;
  crcOk: boolean;
}

export interface Wire {
  write(bytes: Buffer): Promise<void>;
}

export class Link {
  constructor(
    readonly queue: ByteQueue,
    private readonly wire: Wire,
    readonly clock: Clock,
    readonly timers: DexTimers,
  ) {}

  /** Sends after the standard's minimum reply delay. */
  async send(bytes: Buffer): Promise<void> {
    if (this.timers.minReplyMs > 0) await this.clock.sleep(this.timers.minReplyMs);
    await this.wire.write(bytes);
  }

  /** The next control token within `timeoutMs`; stray bytes are skipped. Null on timeout. */
  async token(timeoutMs: number): Promise<Token | null> {
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      const left = deadline - this.clock.now();
      if (left <= 0) return null;
      const b = await this.queue.next(left);
      if (b === null) return null;
      if (b === ENQ) return { t: "enq" };
      if (b === EOT) return { t: "eot" };
      if (b === NAK) return { t: "nak" };
      if (b !== DLE) continue;
      const c = await this.queue.next(this.timers.interByteMs);
      if (c === 0x30 || c === 0x31) return { t: "ack", n: c === 0x30 ? 0 : 1 };
      if (c === 0x3b) return { t: "wack" };
      if (c === SOH || c === STX) return { t: "frame", start: c };
      // DLE SYN is a filler; anything else after DLE is noise
    }
  }

  /**
   * The rest of a frame after DLE SOH/STX: data up to DLE ETB/ETX, then the two CRC bytes (LSB first).
   * @throws DexError `timeout` on a gap longer than Timer B, `protocol` on a malformed or over-long block.
   */
  async frame(): Promise<Frame> {
    const data: number[] = [];
    const gap = this.timers.interByteMs;
    for (;;) {
      const b = await this.queue.next(gap);
      if (b === null) throw new DexError("timeout", `a block stopped after ${data.length} bytes (Timer B)`);
      if (b !== DLE) {
        data.push(b);
        if (data.length > MAX_BLOCK_BYTES)
          throw new DexError("protocol", `a block is longer than ${MAX_BLOCK_BYTES} bytes`);
        continue;
      }
      const c = await this.queue.next(gap);
      if (c === SYN) continue;
      if (c !== ETB && c !== ETX) throw new DexError("protocol", `DLE ${c ?? "nothing"} inside a block`);
      const lo = await this.queue.next(gap);
      const hi = await this.queue.next(gap);
      if (lo === null || hi === null) throw new DexError("timeout", "a block's CRC did not come (Timer B)");
      const payload = Buffer.from(data);
      return { payload, end: c, crcOk: frameCrc(payload, c) === (lo | (hi << 8)) };
    }
  }
}
