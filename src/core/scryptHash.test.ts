import { describe, expect, it } from "vitest";
import { createBadgeCheck, hashBadgeUid } from "../../drivers/nfc/badges.js";
import { hashPin, parsePinHash, verifyPin } from "./pin.js";
import { createScryptHash, parseScryptHash, verifyScryptHash } from "./scryptHash.js";

describe("the one scrypt hash format (issue 35)", () => {
  it("a PIN hash and a badge hash are the same format, read by the same parser", async () => {
    const pin = await hashPin("482913", 1024);
    const badge = await hashBadgeUid("04:A1:B2:C3:D4:E5:F6", 1024);
    for (const h of [pin, badge]) expect(typeof parseScryptHash(h)).toBe("object");
    const parsedPin = parsePinHash(pin);
    if (typeof parsedPin === "string") throw new Error(parsedPin);
    expect(await verifyPin("482913", parsedPin)).toBe(true);
    // A badge entry holding a hash of the same text is recognised: one format, one check.
    const check = createBadgeCheck([
      { name: "ann", hash: (await createScryptHash("04a1b2c3d4e5f6", 1024)) ?? "" },
    ]);
    expect(await check("04A1B2C3D4E5F6")).toBe("ann");
  });

  it("both refuse the same malformed hashes, each in its own words", () => {
    const key = "A".repeat(43);
    const cases = [
      ["not a hash", "format"],
      [`scrypt$1000$8$1$${"s".repeat(22)}$${key}`, "params"],
      [`scrypt$1024$0$1$${"s".repeat(22)}$${key}`, "params"],
      [`scrypt$1024$8$1$${"s".repeat(22)}$${"A".repeat(42)}B`, "object"],
    ] as const;
    for (const [hash, fault] of cases) {
      const parsed = parseScryptHash(hash);
      expect(typeof parsed === "string" ? parsed : "object", hash).toBe(fault);
      const pin = parsePinHash(hash);
      expect(typeof pin === "string", hash).toBe(fault !== "object");
      const badge = () => createBadgeCheck([{ name: "bob", hash }]);
      if (fault === "object") expect(badge).not.toThrow();
      else expect(badge).toThrow(/^badge 0 \(bob\): /);
    }
  });

  it("checks in constant time against the derived key, and refuses a cost out of range", async () => {
    const hash = await createScryptHash("secret", 1024);
    const parsed = parseScryptHash(hash ?? "");
    if (typeof parsed === "string") throw new Error(parsed);
    expect(await verifyScryptHash("secret", parsed)).toBe(true);
    expect(await verifyScryptHash("secreT", parsed)).toBe(false);
    expect(await createScryptHash("secret", 1000)).toBeNull();
  });
});
