import { describe, expect, it } from "vitest";
import {
  badgeHash,
  EntitlementError,
  type EntitlementList,
  signEntitlements,
  verifyEntitlements,
} from "./entitlements.js";
import {
  decryptSecretKey,
  formatSignature,
  generateKeys,
  KDF_INTERACTIVE,
  parsePublicKey,
  signData,
} from "./minisign.js";

async function keyPair() {
  const k = await generateKeys("pass phrase", KDF_INTERACTIVE);
  return { sk: await decryptSecretKey(k.secretKeyText, "pass phrase"), pk: parsePublicKey(k.publicKeyText) };
}

const SALT = "c2FsdHNhbHRzYWx0c2FsdA";
function list(now: number): EntitlementList {
  return {
    version: 1,
    serial: 7,
    issuedAt: now,
    validUntil: now + 86_400_000,
    badgeSalt: SALT,
    timeZone: "Europe/Oslo",
    members: [
      {
        badge: badgeHash("04A1B2C3", SALT),
        memberId: "m-1",
        planId: "coffee-20",
        validFrom: now - 1000,
        validTo: now + 30 * 86_400_000,
        perDay: { items: 2, amount: null },
        perMonth: { items: 20, amount: null },
        units: ["*"],
      },
    ],
  };
}

describe("entitlement lists", () => {
  const now = 1_790_000_000_000;

  it("a list signed by the entitlement key verifies and round-trips", async () => {
    const { sk, pk } = await keyPair();
    const signed = signEntitlements(list(now), sk);
    expect(verifyEntitlements(signed.document, signed.signature, pk, now + 1000)).toEqual(list(now));
  });

  it("refuses another key, a tampered document, an expired list and a signature without the purpose", async () => {
    const ent = await keyPair();
    const config = await keyPair();
    const signed = signEntitlements(list(now), ent.sk);
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof EntitlementError ? e.code : "other";
      }
      return "accepted";
    };
    const byConfigKey = signEntitlements(list(now), config.sk);
    expect(code(() => verifyEntitlements(byConfigKey.document, byConfigKey.signature, ent.pk, now))).toBe(
      "wrongKey",
    );
    const tampered = signed.document.replace('"items":2', '"items":9');
    expect(code(() => verifyEntitlements(tampered, signed.signature, ent.pk, now))).toBe("signature");
    expect(code(() => verifyEntitlements(signed.document, signed.signature, ent.pk, now + 86_400_000))).toBe(
      "expired",
    );
    const plain = formatSignature(
      signData(Buffer.from(signed.document), ent.sk, "version:3 targets:* kind:config"),
    );
    expect(code(() => verifyEntitlements(signed.document, plain, ent.pk, now))).toBe("purpose");
    expect(code(() => verifyEntitlements("{}", "garbage", ent.pk, now))).toBe("malformed");
  });

  it("badge hashes depend on the salt and never contain the UID", () => {
    const a = badgeHash("04A1B2C3", SALT);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toContain("04A1B2C3");
    expect(badgeHash("04A1B2C3", "b3RoZXJzYWx0b3RoZXJzYWx0")).not.toBe(a);
    expect(() => badgeHash("04:a1", SALT)).toThrow(EntitlementError);
  });
});
