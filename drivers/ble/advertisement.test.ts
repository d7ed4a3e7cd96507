import { describe, expect, it } from "vitest";
import { CHECKIN_SERVICE_UUID, decodeBeaconId, encodeAdvertisement, MAX_AD_BYTES } from "./advertisement.js";

describe("BLE check-in advertisement", () => {
  it("encodes a 15-digit id as packed BCD in the scan response", () => {
    const { advertisement, scanResponse } = encodeAdvertisement("123456789012345");
    expect(advertisement.toString("hex")).toBe(
      `0201061107${Buffer.from(CHECKIN_SERVICE_UUID.replaceAll("-", ""), "hex").reverse().toString("hex")}`,
    );
    expect(advertisement.subarray(5, 7).toString("hex")).toBe("e7de");
    expect(scanResponse.toString("hex")).toBe("0cffffff01123456789012345f");
    expect([advertisement.length, scanResponse.length]).toEqual([21, 13]);
  });

  it("fits a GUID within 31 bytes and reads it back lower-case", () => {
    const id = "CD851CD7-8398-4A03-83C1-391A2F5CB71C";
    const { advertisement, scanResponse } = encodeAdvertisement(id, { companyId: 0x0a0b });
    expect(scanResponse.length).toBe(21);
    expect(Math.max(advertisement.length, scanResponse.length)).toBeLessThanOrEqual(MAX_AD_BYTES);
    expect(scanResponse.subarray(0, 5).toString("hex")).toBe("14ff0b0a02");
    expect(decodeBeaconId(scanResponse, 0x0a0b)).toBe(id.toLowerCase());
    expect(decodeBeaconId(scanResponse)).toBeNull();
    expect(decodeBeaconId(encodeAdvertisement("000000000000001").scanResponse)).toBe("000000000000001");
  });

  it("refuses ids that are neither 15 digits nor a GUID", () => {
    for (const bad of ["12345678901234", "1234567890123456", "abc", "cd851cd7-8398-4a03-83c1-391a2f5cb71"]) {
      expect(() => encodeAdvertisement(bad)).toThrow(expect.objectContaining({ code: "invalidId" }));
    }
  });

  it("skips malformed structures when decoding", () => {
    expect(decodeBeaconId(Buffer.from("02ff00", "hex"))).toBeNull();
    expect(decodeBeaconId(Buffer.from("0aff", "hex"))).toBeNull();
    expect(decodeBeaconId(Buffer.alloc(0))).toBeNull();
  });
});
