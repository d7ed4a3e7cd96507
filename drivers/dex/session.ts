/**
 * One DEX/UCS session from the unit's side (dex.md §2): the first handshake as master (ENQ first) or as
 * slave (the machine's ENQ came first), the second handshake with roles swapped, then the data blocks with
 * the alternating DLE 0/1 acknowledgement and a NAK on a bad CRC. The unit never sends configuration (no
 * SD1): as master it asks `R` (read); as slave it only answers.
 */
import type { Link } from "./link.js";
import {
  ACK,
  DexError,
  ENQ,
  EOT,
  ETX,
  type FirstHandshake,
  firstHandshake,
  frame,
  NAK,
  parseFirstHandshake,
  parseSecondHandshake,
  RESPONSES,
  SOH,
  secondHandshake,
} from "./protocol.js";

/** How many times a block or handshake is asked for again (NAK) or an ENQ is repeated. */
export const RESENDS = 3;

export interface SessionResult {
  role: "master" | "slave";
  /** The machine's communication id and, in slave role, the op it announced. */
  vmdCommId: string;
  op: string;
  /** The data blocks joined, or null for a handshake-only session. */
  data: Buffer | null;
  blocks: number;
  naks: number;
}

export interface SessionOptions {
  commId: string;
  rev: string;
  /** Stop after the handshakes: the data ENQ is answered with EOT (doctor). */
  handshakeOnly?: boolean;
  /** The machine's ENQ was already read (it opened the session): start as slave. */
  machineFirst?: boolean;
  maxBytes: number;
}

const ascii = (b: Buffer) => b.toString("latin1").replace(/[^\x20-\x7e]/g, "?");

/** ENQ until DLE 0, a WACK meaning "wait", or the machine's own ENQ (it is master: we become slave). */
async function enquire(link: Link): Promise<"ack" | "slave"> {
  for (let i = 0; i < RESENDS; i++) {
    await link.send(Buffer.of(ENQ));
    const tok = await link.token(link.timers.replyMs);
    if (tok?.t === "ack" && tok.n === 0) return "ack";
    if (tok?.t === "enq") return "slave";
    if (tok?.t === "wack") await link.clock.sleep(link.timers.wackWaitMs);
  }
  throw new DexError("silent", `the machine did not answer ENQ (${RESENDS} tries, Timer A each)`);
}

/** Sends a handshake frame until acknowledged with DLE `n`, then EOT. */
async function sendHandshake(link: Link, payload: Buffer, n: 0 | 1): Promise<void> {
  for (let i = 0; i < RESENDS; i++) {
    await link.send(frame(SOH, payload, ETX));
    const tok = await link.token(link.timers.replyMs);
    if (tok?.t === "ack" && tok.n === n) {
      await link.send(Buffer.of(EOT));
      return;
    }
    if (tok === null || tok.t === "eot") break;
  }
  throw new DexError("nak", "the machine did not acknowledge the handshake");
}

/** Waits for the other side's ENQ, answers DLE 0 and reads its handshake frame (NAK on a bad CRC). */
async function receiveHandshake(link: Link, waitMs: number, enqRead: boolean): Promise<Buffer> {
  if (!enqRead) {
    const tok = await link.token(waitMs);
    if (tok?.t !== "enq") throw new DexError("timeout", "the machine did not start its handshake (no ENQ)");
  }
  await link.send(ACK[0]);
  for (let i = 0; i <= RESENDS; i++) {
    const tok = await link.token(link.timers.replyMs);
    if (tok?.t === "enq") {
      await link.send(ACK[0]);
      continue;
    }
    if (tok?.t !== "frame" || tok.start !== SOH) throw new DexError("timeout", "no handshake frame came");
    const f = await link.frame();
    if (f.crcOk) {
      await link.send(ACK[1]);
      const end = await link.token(link.timers.replyMs);
      if (end !== null && end.t !== "eot")
        throw new DexError("protocol", "the handshake did not end with EOT");
      return f.payload;
    }
    await link.send(Buffer.of(NAK));
  }
  throw new DexError("crc", `the handshake failed its CRC ${RESENDS + 1} times`);
}

/** Data phase: ENQ, then blocks until the one ended by ETX, acknowledged DLE 1, DLE 0, … */
async function receiveData(
  link: Link,
  opts: SessionOptions,
): Promise<{ data: Buffer | null; blocks: number; naks: number }> {
  const first = await link.token(link.timers.lateEnqMs);
  if (first?.t === "eot" || (first === null && opts.handshakeOnly)) return { data: null, blocks: 0, naks: 0 };
  if (first?.t !== "enq") throw new DexError("timeout", "the machine did not start sending data (no ENQ)");
  if (opts.handshakeOnly) {
    await link.send(Buffer.of(EOT));
    return { data: null, blocks: 0, naks: 0 };
  }
  await link.send(ACK[0]);
  let last = ACK[0];
  let next: 0 | 1 = 1;
  const parts: Buffer[] = [];
  let size = 0;
  let blocks = 0;
  let naks = 0;
  let nakRun = 0;
  for (;;) {
    const tok = await link.token(link.timers.inactivityMs);
    if (tok === null)
      throw new DexError("timeout", `the machine went quiet after ${blocks} blocks (Timer D)`);
    if (tok.t === "enq") {
      await link.send(last); // the machine missed our answer: repeat it
      continue;
    }
    if (tok.t === "eot")
      throw new DexError(
        "protocol",
        `the machine ended the session after ${blocks} blocks, before the last one`,
      );
    if (tok.t !== "frame") continue;
    const f = await link.frame();
    if (!f.crcOk) {
      naks++;
      if (++nakRun > RESENDS) throw new DexError("crc", `block ${blocks + 1} failed its CRC ${nakRun} times`);
      await link.send(Buffer.of(NAK));
      continue;
    }
    nakRun = 0;
    size += f.payload.length;
    if (size > opts.maxBytes)
      throw new DexError("too-large", `the audit file is over ${opts.maxBytes} bytes`);
    parts.push(f.payload);
    blocks++;
    last = ACK[next];
    next = next === 1 ? 0 : 1;
    await link.send(last);
    if (f.end === ETX) break;
  }
  await link.token(link.timers.replyMs); // EOT; its loss does not undo the read (dex.md §2)
  return { data: Buffer.concat(parts), blocks, naks };
}

function checkResponse(payload: Buffer): { commId: string } {
  const hs = parseSecondHandshake(payload);
  if (!hs) throw new DexError("protocol", `an unreadable second handshake '${ascii(payload)}'`);
  if (hs.response !== "00") {
    const why = RESPONSES[hs.response] ?? "unknown response";
    throw new DexError("refused", `the machine answered ${hs.response} (${why})`, hs.response);
  }
  return { commId: hs.commId };
}

/** Runs one whole session. Throws DexError; the caller aborts the line (EOT) and may retry. */
export async function runSession(link: Link, opts: SessionOptions): Promise<SessionResult> {
  const role = opts.machineFirst ? "slave" : await enquire(link);
  let vmd: FirstHandshake | { commId: string; op: string };
  if (role === "ack") {
    await sendHandshake(link, firstHandshake(opts.commId, "R", opts.rev), 1);
    vmd = { ...checkResponse(await receiveHandshake(link, link.timers.lateEnqMs, false)), op: "R" };
  } else {
    const hs = parseFirstHandshake(await receiveHandshake(link, 0, true));
    if (!hs) throw new DexError("protocol", "an unreadable first handshake from the machine");
    vmd = hs;
    // the machine's EOT ended its first handshake: at least 100 ms before our ENQ opens the second
    await link.clock.sleep(link.timers.turnaroundMs);
    if ((await enquire(link)) !== "ack")
      throw new DexError("protocol", "both sides sent ENQ in the second handshake");
    await sendHandshake(link, secondHandshake("00", opts.commId, hs.rev || opts.rev), 1);
  }
  const d = await receiveData(link, opts);
  return { role: role === "ack" ? "master" : "slave", vmdCommId: vmd.commId, op: vmd.op, ...d };
}
