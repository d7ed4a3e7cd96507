import { describe, expect, it } from "vitest";
import { DexError } from "../../drivers/dex/protocol.js";
import { runDoctor } from "./checks.js";
import { fakeDeps, loaded, row } from "./doctor.test-support.js";

const withDex = () => loaded({ dex: { enabled: true, device: "/dev/ttyUSB1" } });

describe("vendd doctor: the DEX port (issue 36)", () => {
  it("passes when the machine answers the handshake, and says which role the unit took", async () => {
    const r = row(await runDoctor(withDex(), fakeDeps()), "dex");
    expect(r).toMatchObject({
      status: "ok",
      detail: "machine SIM0000001 answered the DEX handshake on /dev/ttyUSB1 (unit as master)",
    });
  });

  it("fails with what to check on a silent machine or a missing adapter", async () => {
    const silent = fakeDeps({
      dexHandshake: async () => {
        throw new DexError("silent", "the machine did not answer ENQ (3 tries, Timer A each)");
      },
    });
    expect(row(await runDoctor(withDex(), silent), "dex").detail).toBe(
      "no DEX handshake on /dev/ttyUSB1 (the machine did not answer ENQ (3 tries, Timer A each)): is the USB-RS232 adapter on the machine's DEX jack (tip = from the machine, ring = to it), and the machine idle with no credit? Set dex.device to /dev/serial/by-id/…",
    );
    const missing = row(await runDoctor(withDex(), fakeDeps({ exists: (p) => p !== "/dev/ttyUSB1" })), "dex");
    expect(missing).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("/dev/ttyUSB1 does not exist"),
    });
  });

  it("is skipped when DEX is off, and the config refuses DEX on without a device", () => {
    expect(() => loaded({ dex: { enabled: true } })).toThrow(
      /dex\.device.*required when dex\.enabled is true/s,
    );
    expect(() => loaded({ dex: { timeZone: "Mars/Base" } })).toThrow(/not an IANA time zone/);
  });
});
