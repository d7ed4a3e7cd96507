import { EventEmitter } from "node:events";
import { PAGE_BYTES } from "./ndef.js";
import {
  createNfcStation,
  type NfcLike,
  type NfcStation,
  type ReaderLike,
  type StationOptions,
} from "./station.js";

/** A simulated station's badges and collaborators (the reader is the simulation). */
export type SimStationOptions = Omit<StationOptions, "kind" | "nfc" | "unavailable">;

/** An NTAG21x in memory: 7-byte UID, capability container on page 3, data area from page 4. */
export class SimTag {
  readonly pages: Buffer;
  constructor(
    readonly uid: string,
    /** Data area bytes: 144 (NTAG213), 504 (NTAG215), 888 (NTAG216). */
    dataBytes = 144,
    opts: { readOnly?: boolean; ndef?: boolean } = {},
  ) {
    this.pages = Buffer.alloc(16 + dataBytes + 20);
    Buffer.from([0xe1, 0x10, dataBytes / 8, opts.readOnly ? 0x0f : 0x00]).copy(this.pages, 12);
    if (opts.ndef === false) this.pages.fill(0, 12, 16);
  }
}

/** A reader with nfc-pcsc's Reader surface: `present` a tag, `remove` it, `unplug` the reader. */
export class SimReader extends EventEmitter implements ReaderLike {
  private tag: SimTag | null = null;
  /** Makes the next write fail like a tag pulled away mid-write. */
  failNextWrite = false;

  constructor(readonly name: string) {
    super();
  }

  present(tag: SimTag): void {
    this.tag = tag;
    this.emit("card", { uid: tag.uid, standard: "TAG_ISO_14443_3", type: "TAG_ISO_14443_3" });
  }

  remove(): void {
    const tag = this.tag;
    this.tag = null;
    if (tag) this.emit("card.off", { uid: tag.uid });
  }

  unplug(): void {
    this.tag = null;
    this.emit("end");
  }

  async read(block: number, length: number, blockSize = PAGE_BYTES): Promise<Buffer> {
    const tag = this.need();
    const start = block * blockSize;
    if (start + length > tag.pages.length) throw new Error("read beyond the tag");
    return Buffer.from(tag.pages.subarray(start, start + length));
  }

  async write(block: number, data: Buffer, blockSize = PAGE_BYTES): Promise<void> {
    const tag = this.need();
    if (data.length % blockSize !== 0) throw new Error("Invalid data length");
    if (this.failNextWrite) {
      this.failNextWrite = false;
      throw new Error("Write operation failed: Status code: 0x6300");
    }
    data.copy(tag.pages, block * blockSize);
  }

  private need(): SimTag {
    if (this.tag === null) throw new Error("card_not_connected");
    return this.tag;
  }
}

/** nfc-pcsc's `NFC` surface: emits `reader` for each plugged reader. */
export class SimNfc extends EventEmitter implements NfcLike {
  plug(name = "Sim Reader 00 00"): SimReader {
    const reader = new SimReader(name);
    this.emit("reader", reader);
    return reader;
  }

  close(): void {
    this.removeAllListeners();
  }
}

/** The simulated station: the real station logic over a `SimNfc` (plug readers, present tags). */
export function createSimNfcStation(opts: SimStationOptions): NfcStation & { sim: SimNfc } {
  const sim = new SimNfc();
  return Object.assign(createNfcStation({ ...opts, kind: "sim", nfc: sim, unavailable: "" }), { sim });
}
