/**
 * The standard's timers on an injected clock (dex.md §2): no real sleeps. The machine's side is scripted
 * byte by byte against a ManualClock; each test names the timer it proves.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ByteQueue } from "./byteQueue.js";
import { Link } from "./link.js";
import { ACK, DexError, ENQ, ETX, frame, SOH, STANDARD_TIMERS, STX, secondHandshake } from "./protocol.js";
import { runSession } from "./session.js";

function rig() {
  const clock = new ManualClock(0);
  const queue = new ByteQueue(clock);
  const sent: { at: number; bytes: Buffer }[] = [];
  const link = new Link(
    queue,
    { write: async (bytes) => void sent.push({ at: clock.now(), bytes }) },
    clock,
    STANDARD_TIMERS,
  );
  return { clock, queue, sent, link };
}

const opts = { commId: "VND0000001", rev: "R00L06", maxBytes: 4096 };

describe("DEX/UCS timers on a ManualClock", () => {
  it("answers no sooner than 10 ms and repeats ENQ after Timer A (1 s), 3 times, then fails 'silent'", async () => {
    const { clock, sent, link } = rig();
    const run = runSession(link, opts).catch((e: unknown) => e);
    await clock.advanceAsync(3 * (10 + 1000) + 50, 5);
    const err = await run;
    expect(err).toBeInstanceOf(DexError);
    expect((err as DexError).code).toBe("silent");
    expect(sent.map((s) => [s.at, s.bytes[0]])).toEqual([
      [10, ENQ],
      [1020, ENQ],
      [2030, ENQ],
    ]);
  });

  it("fails a block that stops for longer than Timer B (100 ms) with 'timeout'", async () => {
    const { clock, queue, link } = rig();
    const run = link.frame().catch((e: unknown) => e);
    queue.push(Buffer.from("ST*001*0001", "latin1"));
    await clock.advanceAsync(99, 1);
    queue.push(Buffer.from("\r", "latin1"));
    await clock.advanceAsync(99, 1); // gaps under 100 ms are fine
    await clock.advanceAsync(5, 1);
    const err = (await run) as DexError;
    expect([err.code, err.message]).toEqual(["timeout", "a block stopped after 12 bytes (Timer B)"]);
  });

  it("skips DLE SYN fillers inside a block and checks the CRC", async () => {
    const { clock, queue, link } = rig();
    const f = frame(STX, Buffer.from("DXE*1*1\r\n", "latin1"), ETX);
    const withSyn = Buffer.concat([f.subarray(2, 5), Buffer.from([0x10, 0x16]), f.subarray(5)]);
    const run = link.frame();
    queue.push(withSyn);
    await clock.advanceAsync(1);
    const got = await run;
    expect([got.payload.toString("latin1"), got.crcOk, got.end]).toEqual(["DXE*1*1\r\n", true, ETX]);
  });

  it("aborts the data phase after Timer D (2.15 s) without activity", async () => {
    const { clock, queue, sent, link } = rig();
    const run = runSession(link, opts).catch((e: unknown) => e);
    const answer = async (bytes: Buffer) => {
      await clock.advanceAsync(20, 1);
      queue.push(bytes);
    };
    await answer(ACK[0]); // to our ENQ
    await answer(ACK[1]); // to our handshake
    await answer(Buffer.of(ENQ)); // second handshake
    await answer(frame(SOH, secondHandshake("00", "SIM0000001", "R00L06"), ETX));
    await answer(Buffer.of(0x04)); // EOT
    await answer(Buffer.of(ENQ)); // data
    await clock.advanceAsync(50, 1);
    const acks = sent.length;
    await clock.advanceAsync(2100, 10);
    expect(sent.length).toBe(acks); // still waiting inside Timer D
    await clock.advanceAsync(100, 10);
    const err = (await run) as DexError;
    expect([err.code, err.message]).toEqual(["timeout", "the machine went quiet after 0 blocks (Timer D)"]);
  });
});
