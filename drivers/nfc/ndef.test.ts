import { describe, expect, it } from "vitest";
import { checkinUri } from "../display/display.js";
import { decodeNdefUri, encodeNdefUri } from "./ndef.js";
import { writeUriTag } from "./ntag.js";
import { SimReader, SimTag } from "./sim.js";

const uri = checkinUri("servicepos", "123456789012345");

describe("NDEF URI record", () => {
  it("encodes the check-in URI as TLV 0x03, a short well-known U record with prefix 0x00, and 0xFE", () => {
    const bytes = encodeNdefUri(uri);
    expect(uri.length).toBe(45);
    expect(bytes.subarray(0, 7).toString("hex")).toBe("0332d1012e5500");
    expect(bytes.subarray(7, 52).toString("utf8")).toBe(uri);
    expect(bytes[52]).toBe(0xfe);
    expect(bytes.length).toBe(56);
    expect(bytes.subarray(53).every((b) => b === 0)).toBe(true);
    expect(decodeNdefUri(bytes)).toBe(uri);
  });

  it("abbreviates known prefixes with the longest match", () => {
    const bytes = encodeNdefUri("https://www.example.com/x");
    expect(bytes.subarray(3, 7).toString("hex")).toBe("010e5502");
    expect(decodeNdefUri(bytes)).toBe("https://www.example.com/x");
    expect(encodeNdefUri("http://a")[6]).toBe(0x03);
  });

  it("uses the 3-byte TLV length for a record of 255 bytes or more, and refuses payloads over 255", () => {
    const long = `servicepos://${"a".repeat(237)}`;
    const bytes = encodeNdefUri(long);
    expect(bytes.subarray(0, 4).toString("hex")).toBe("03ff00ff");
    expect(decodeNdefUri(bytes)).toBe(long);
    expect(() => encodeNdefUri(`servicepos://${"a".repeat(300)}`)).toThrow(
      expect.objectContaining({ code: "tooLong" }),
    );
  });

  it("skips NULL and Lock Control TLVs and rejects other content", () => {
    const withLock = Buffer.concat([Buffer.from("000103a0100300", "hex"), encodeNdefUri(uri)]);
    expect(decodeNdefUri(withLock)).toBe(uri);
    expect(decodeNdefUri(Buffer.alloc(16))).toBeNull();
    expect(decodeNdefUri(Buffer.from("0300fe", "hex"))).toBeNull();
    expect(decodeNdefUri(Buffer.from("03ff01", "hex"))).toBeNull();
    expect(decodeNdefUri(Buffer.from("0305d1010154", "hex"))).toBeNull();
    expect(decodeNdefUri(Buffer.from("0306d101025524", "hex"))).toBeNull();
  });
});

describe("writeUriTag on an NTAG213", () => {
  const reader = (tag: SimTag) => {
    const r = new SimReader("r");
    r.present(tag);
    return r;
  };

  it("writes from page 4 and verifies by reading back", async () => {
    const tag = new SimTag("04a1b2c3d4e5f6");
    expect(await writeUriTag(reader(tag), uri)).toBe(56);
    expect(tag.pages.subarray(16, 18).toString("hex")).toBe("0332");
    expect(decodeNdefUri(tag.pages.subarray(16))).toBe(uri);
  });

  it("refuses locked, non-NDEF and too small tags before writing", async () => {
    await expect(writeUriTag(reader(new SimTag("04aa", 144, { readOnly: true })), uri)).rejects.toMatchObject(
      {
        code: "readOnly",
      },
    );
    await expect(writeUriTag(reader(new SimTag("04aa", 144, { ndef: false })), uri)).rejects.toMatchObject({
      code: "notNdef",
    });
    const tag = new SimTag("04aa", 48);
    await expect(writeUriTag(reader(tag), uri)).rejects.toMatchObject({ code: "tooLong" });
    expect(tag.pages.subarray(16).every((b) => b === 0)).toBe(true);
  });

  it("reports a failed write as io and a write that did not stick as verifyFailed", async () => {
    const r = reader(new SimTag("04bb"));
    r.failNextWrite = true;
    await expect(writeUriTag(r, uri)).rejects.toMatchObject({ code: "io" });
    const lossy = Object.assign(reader(new SimTag("04cc")), { write: async () => {} });
    await expect(writeUriTag(lossy, uri)).rejects.toMatchObject({ code: "verifyFailed" });
  });
});
