/**
 * DEX/UCS link-level pieces (dex.md §2): control codes, the framed handshake and data blocks with their
 * CRC-16 (over the bytes after DLE SOH/STX through ETB/ETX, DLE excluded, sent LSB first), the handshake
 * contents and the standard's timers. Shared by the reader (the unit, "DC") and the VMC-side simulator.
 */
import { crc16 } from "./crc16.js";

export const SOH = 0x01;
export const STX = 0x02;
export const ETX = 0x03;
export const EOT = 0x04;
export const ENQ = 0x05;
export const DLE = 0x10;
export const NAK = 0x15;
export const SYN = 0x16;
export const ETB = 0x17;
export const ACK = [Buffer.from([DLE, 0x30]), Buffer.from([DLE, 0x31])] as const;
export const WACK = Buffer.from([DLE, 0x3b]);

/** DTS 6.x revision/level, and the legacy one some controllers insist on (dex.md §2). */
export const REV_DTS6 = "R00L06";
export const REV_LEGACY = "R01L01";

/** Second-handshake response codes (dex.md §2). */
export const RESPONSES: Readonly<Record<string, string>> = {
  "00": "OK",
  "01": "unknown communication id",
  "02": "bad revision/level",
  "03": "conflict (retry)",
  "04": "no data",
  "05": "error",
  "90": "manufacturer mode",
};

/** The standard's timers, milliseconds (dex.md §2 "Timers"). Injectable so tests can name them. */
export interface DexTimers {
  /** Nothing is answered sooner than this. */
  minReplyMs: number;
  /** Timer A: a reply to ENQ or a block. */
  replyMs: number;
  /** Timer B: the longest gap inside a block. */
  interByteMs: number;
  /** Timer D: no activity at all aborts the session (detected at 2.1–2.2 s). */
  inactivityMs: number;
  /** The data ENQ after the handshakes may come late (one reader waits 3 s). */
  lateEnqMs: number;
  /** After a WACK, wait this long before the next ENQ (100–500 ms). */
  wackWaitMs: number;
  /** Never hold the machine's line longer than this. */
  sessionMs: number;
  /**
   * The pause after the other side's EOT before this side's ENQ opens the next handshake (at least 100 ms,
   * dex.md §2 timers): the unit as slave after the machine's first handshake, the simulated machine after
   * the unit's.
   */
  turnaroundMs: number;
}

export const STANDARD_TIMERS: DexTimers = {
  minReplyMs: 10,
  replyMs: 1000,
  interByteMs: 100,
  inactivityMs: 2150,
  lateEnqMs: 3000,
  wackWaitMs: 300,
  sessionMs: 60_000,
  turnaroundMs: 110,
};

/** The most data bytes one block may carry (≤ 245 with DLE ETB/ETX; more is accepted up to this). */
export const MAX_BLOCK_BYTES = 1024;

/** `DLE start payload DLE end crcLo crcHi`. */
export function frame(
  start: typeof SOH | typeof STX,
  payload: Uint8Array,
  end: typeof ETB | typeof ETX,
): Buffer {
  const crc = crc16(Uint8Array.of(end), crc16(payload));
  return Buffer.concat([Buffer.from([DLE, start]), payload, Buffer.from([DLE, end, crc & 0xff, crc >>> 8])]);
}

/** The CRC a received frame must carry. */
export function frameCrc(payload: Uint8Array, end: number): number {
  return crc16(Uint8Array.of(end), crc16(payload));
}

/** A communication id padded or cut to the 10 characters of the handshake. */
export function commId10(id: string): string {
  return id.slice(0, 10).padEnd(10, "0");
}

/** First handshake (sent by the master): commId(10) op(1) revLevel(6). */
export function firstHandshake(commId: string, op: string, rev: string): Buffer {
  return Buffer.from(`${commId10(commId)}${op}${rev}`, "latin1");
}

export interface FirstHandshake {
  commId: string;
  op: string;
  rev: string;
}

export function parseFirstHandshake(payload: Uint8Array): FirstHandshake | null {
  const t = Buffer.from(payload).toString("latin1");
  if (t.length < 11) return null;
  return { commId: t.slice(0, 10), op: t.slice(10, 11), rev: t.slice(11, 17) };
}

/** Second handshake (sent by the other side): response(2) commId(10) rev(6). */
export function secondHandshake(response: string, commId: string, rev: string): Buffer {
  return Buffer.from(`${response}${commId10(commId)}${rev}`, "latin1");
}

export interface SecondHandshake {
  response: string;
  commId: string;
  rev: string;
}

/** Accepts both orders seen (dex.md §2): response first, or the commId first with the response at 10. */
export function parseSecondHandshake(payload: Uint8Array): SecondHandshake | null {
  const t = Buffer.from(payload).toString("latin1");
  if (t.length < 12) return null;
  const head = t.slice(0, 2);
  if (RESPONSES[head] !== undefined) return { response: head, commId: t.slice(2, 12), rev: t.slice(12, 18) };
  return { response: t.slice(10, 12), commId: t.slice(0, 10), rev: t.slice(12, 18) };
}

export type DexErrorCode =
  | "silent"
  | "timeout"
  | "crc"
  | "nak"
  | "refused"
  | "protocol"
  | "too-large"
  | "port"
  | "aborted";

/** A failed session; `code` is what a caller decides on (retry, report, give up). */
export class DexError extends Error {
  override readonly name = "DexError";
  constructor(
    readonly code: DexErrorCode,
    message: string,
    readonly response?: string,
  ) {
    super(message);
  }
}
