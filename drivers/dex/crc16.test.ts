import { describe, expect, it } from "vitest";
import { crc16, crc16Text } from "./crc16.js";

describe("CRC-16/ARC (dex.md §3)", () => {
  it("gives the check value BB3D for '123456789'", () => {
    expect(crc16Text("123456789")).toBe(0xbb3d);
  });

  it("matches the note's handshake block vectors (DLE excluded, ETX included)", () => {
    expect(crc16Text("1234567890RR00L06\x03")).toBe(0xbde1);
    expect(crc16Text("00XYZ0000001R00L06\x03")).toBe(0x20f4);
  });

  it("continues over pieces exactly as over the whole", () => {
    const whole = Buffer.from("00XYZ0000001R00L06\x03", "latin1");
    expect(crc16(whole.subarray(7), crc16(whole.subarray(0, 7)))).toBe(0x20f4);
  });
});
