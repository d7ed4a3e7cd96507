import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { checkinUri } from "../display/display.js";
import { createBadgeCheck, hashBadgeUid, normaliseUid } from "./badges.js";
import { createNfc, startPcsc } from "./factory.js";
import { decodeNdefUri } from "./ndef.js";
import { createSimNfcStation, SimNfc, SimTag } from "./sim.js";
import { type BadgeTap, createNfcStation, type ReaderState } from "./station.js";

const uri = checkinUri("servicepos", "cd851cd7-8398-4a03-83c1-391a2f5cb71c");
const BADGE = "04:A1:B2:C3:D4:E5:F6";

/** Lets the async card handling finish (scrypt runs on the thread pool); bounded, no timers. */
async function settle(until: () => boolean) {
  for (let i = 0; i < 100_000 && !until(); i++) await new Promise((r) => setImmediate(r));
}

async function setup() {
  const clock = new ManualClock(0);
  const hash = await hashBadgeUid(BADGE, 1024);
  const station = createSimNfcStation({ badges: [{ name: "alice", hash }], clock });
  const taps: BadgeTap[] = [];
  const states: ReaderState[] = [];
  station.onBadge((t) => taps.push(t));
  station.onReaderState((s) => states.push(s));
  return { clock, station, taps, states };
}

describe("badges", () => {
  it("matches a UID against scrypt hashes, in any notation, and nothing else", async () => {
    const hash = await hashBadgeUid("04a1b2c3d4e5f6", 1024);
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    const check = createBadgeCheck([
      { name: "bob", hash: await hashBadgeUid("0011223344", 1024) },
      { name: "alice", hash },
    ]);
    expect(await check("04 A1 B2 C3 D4 E5 F6")).toBe("alice");
    expect(await check("04a1b2c3d4e5f7")).toBeNull();
    expect(await check("zz")).toBeNull();
    expect(normaliseUid("04-a1-b2-c3")).toBe("04a1b2c3");
  });

  it("refuses a malformed hash naming the entry, without echoing the hash", () => {
    const bad = "scrypt$1000$8$1$c2FsdHNhbHRzYWx0c2FsdA$xx";
    expect(() => createBadgeCheck([{ name: "carol", hash: bad }])).toThrow(/^badge 0 \(carol\): hash is not/);
    try {
      createBadgeCheck([{ name: "carol", hash: bad }]);
    } catch (err) {
      expect(String(err)).not.toContain("c2FsdHNh");
    }
  });
});

describe("NFC station", () => {
  it("tracks reader plug, unplug and replug", async () => {
    const { station, states } = await setup();
    expect(station.readerState()).toBe("disconnected");
    const r1 = station.sim.plug();
    r1.unplug();
    station.sim.plug();
    expect(states).toEqual(["connected", "disconnected", "connected"]);
    r1.emit("error", new Error("SCardGetStatusChange failed"));
    expect(station.readerState()).toBe("connected");
  });

  it("tells an authorised badge from an unknown card", async () => {
    const { station, taps } = await setup();
    const r = station.sim.plug();
    r.present(new SimTag("04a1b2c3d4e5f6"));
    r.remove();
    r.present(new SimTag("04000000000001"));
    r.emit("card", { atr: Buffer.from("3b8f", "hex"), standard: "TAG_ISO_14443_4" });
    await settle(() => taps.length >= 2);
    expect(taps).toEqual([
      { authorized: true, name: "alice" },
      { authorized: false, name: null },
    ]);
  });

  it("writes the check-in URI to the next non-badge tag when armed, after a replug", async () => {
    const { station, taps } = await setup();
    station.sim.plug().unplug();
    const r = station.sim.plug();
    const writing = station.writeNextTag(uri, 10_000);
    await expect(station.writeNextTag(uri)).rejects.toMatchObject({ code: "state" });
    r.present(new SimTag("04a1b2c3d4e5f6"));
    await settle(() => taps.length === 1);
    const tag = new SimTag("04112233445566", 504);
    r.present(tag);
    expect(await writing).toEqual({ uid: "04112233445566" });
    expect(decodeNdefUri(tag.pages.subarray(16))).toBe(uri);
    expect(taps).toEqual([{ authorized: true, name: "alice" }]);
  });

  it("a write fails with io when the tag is pulled, and times out with no tag", async () => {
    const { clock, station } = await setup();
    const r = station.sim.plug();
    r.failNextWrite = true;
    const writing = station.writeNextTag(uri);
    r.present(new SimTag("04112233445566"));
    await expect(writing).rejects.toMatchObject({ code: "io" });
    const waiting = station.writeNextTag(uri, 1000);
    clock.advance(1000);
    await expect(waiting).rejects.toMatchObject({ code: "timeout" });
    const closing = station.writeNextTag(uri);
    await station.close();
    await expect(closing).rejects.toMatchObject({ code: "state" });
  });

  it("a PC/SC error or a missing module degrades the station without throwing", async () => {
    const clock = new ManualClock(0);
    const { station } = await setup();
    station.sim.emit("error", new Error("SCardEstablishContext error: Service not available."));
    expect(station.readerState()).toBe("degraded");
    station.sim.plug();
    expect(station.readerState()).toBe("connected");
    const loaded = await startPcsc("vendd-no-such-nfc-module");
    expect(loaded.reason).toBe("module not available: ERR_MODULE_NOT_FOUND");
    const none = createNfcStation({ kind: "pcsc", nfc: null, unavailable: loaded.reason, badges: [], clock });
    expect(none.readerState()).toBe("degraded");
    await expect(createNfc({ kind: "usb", badges: [] } as never, { clock })).rejects.toThrow(
      "valid: pcsc, sim",
    );
  });

  it("no pcscd: degraded, asked again with backoff (5 s, then 10 s), and the reader taken once it answers", async () => {
    const clock = new ManualClock(0);
    const down = "pcscd is not running (nothing listens on /run/pcscd/pcscd.comm)";
    const pcsc = new SimNfc();
    let up = false;
    let calls = 0;
    const retry = async () => {
      calls++;
      return up ? { nfc: pcsc, reason: "" } : { nfc: null, reason: down };
    };
    const station = createNfcStation({
      kind: "pcsc",
      nfc: null,
      unavailable: down,
      badges: [],
      clock,
      retry,
    });
    expect(station.readerState()).toBe("degraded");
    expect(station.reason()).toBe(down);
    await clock.advanceAsync(5000, 1000);
    expect(calls).toBe(1);
    expect(station.readerState()).toBe("degraded");
    up = true;
    await clock.advanceAsync(9000, 1000);
    expect(calls).toBe(1);
    await clock.advanceAsync(1000, 1000);
    expect(calls).toBe(2);
    expect(station.readerState()).toBe("disconnected");
    pcsc.plug();
    expect(station.readerState()).toBe("connected");
    await clock.advanceAsync(120_000, 10_000);
    expect(calls).toBe(2);
    await station.close();
    // Closed while pcscd is still missing: asked no more.
    const again = createNfcStation({ kind: "pcsc", nfc: null, unavailable: down, badges: [], clock, retry });
    await again.close();
    await clock.advanceAsync(120_000, 10_000);
    expect(calls).toBe(2);
  });

  it("a PC/SC library missing on the board is named with the packages to install", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-nfc-"));
    try {
      const fake = join(dir, "nfc.mjs");
      writeFileSync(
        fake,
        'throw Object.assign(new Error("libpcsclite.so.1: cannot open shared object file: No such file or directory"), { code: "ERR_DLOPEN_FAILED" });\n',
      );
      const loaded = await startPcsc(pathToFileURL(fake).href);
      expect(loaded.nfc).toBeNull();
      expect(loaded.reason).toBe(
        "module not available: libpcsclite.so.1 is missing (apt-get install pcscd libccid)",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
