import { sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  canonicalRequest,
  ed25519Checker,
  generateUnitKey,
  MAX_SKEW_MS,
  publicKeyFromRaw,
  signRequest,
  verifyEd25519,
  verifyRequest,
  verifyRequestAsync,
} from "./fleetAuth.js";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const PATH = "/api/unit/v1/heartbeat";

describe("signed unit requests: the synchronous and the thread-pool check agree", () => {
  const unit = generateUnitKey();
  const other = generateUnitKey();
  const body = JSON.stringify({ unitId: "vm-1" });
  const headers = signRequest(unit, "POST", PATH, body, NOW);

  const both = async (h: Record<string, string>, b: string, path = PATH, now = NOW) => {
    const sync = verifyRequest("POST", path, h, b, now);
    const async = await verifyRequestAsync("POST", path, h, b, now);
    expect(async).toEqual(sync);
    return sync.ok ? "ok" : sync.code;
  };

  it("accepts the signed request and names its key and nonce", async () => {
    expect(await both(headers, body)).toBe("ok");
    const v = await verifyRequestAsync("POST", PATH, headers, body, NOW);
    expect(v).toMatchObject({ ok: true, publicKey: unit.publicKey, timestamp: NOW });
  });

  it("refuses a tampered body, another path, another unit's key, clock skew and missing headers", async () => {
    expect(await both(headers, `${body} `)).toBe("signature");
    expect(await both(headers, body, "/api/unit/v1/events")).toBe("signature");
    expect(await both({ ...headers, "x-vendd-key": other.publicKey }, body)).toBe("signature");
    expect(await both(headers, body, PATH, NOW + MAX_SKEW_MS + 1)).toBe("skew");
    const { "x-vendd-signature": _dropped, ...unsigned } = headers;
    expect(await both(unsigned, body)).toBe("unsigned");
    expect(await both({ ...headers, "x-vendd-signature": "A".repeat(86) }, body)).toBe("signature");
  });
});

describe("Ed25519 checks: libsodium (sodium-native) and node:crypto", () => {
  // sodium-native is an optional dependency with prebuilt binaries for these two; `npm ci` installs it there.
  const prebuilt = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64");
  const unit = generateUnitKey();
  const other = generateUnitKey();
  const data = canonicalRequest("POST", PATH, String(NOW), "n".repeat(22), '{"unitId":"vm-1"}');
  const good = sign(null, data, unit.privateKey);
  const key = (raw: string) => {
    const k = publicKeyFromRaw(raw);
    if (k === null) throw new Error(`not a key: ${raw}`);
    return k;
  };
  const check = (via: "libsodium" | "node", sig: Buffer, msg = data, raw = unit.publicKey) =>
    verifyEd25519(msg, sig, raw, key(raw), via);
  const flipped = (b: Buffer, at: number) => {
    const c = Buffer.from(b);
    c[at] = (c[at] ?? 0) ^ 1;
    return c;
  };

  it.runIf(prebuilt)("checks with libsodium where sodium-native is installed", () => {
    expect(ed25519Checker()).toBe("libsodium");
  });

  it.runIf(prebuilt)("both accept a unit's signature and refuse every altered one", () => {
    // S + L: the same point equation with a scalar out of range, which a malleable check would accept.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = BigInt(`0x${Buffer.from(good.subarray(32)).reverse().toString("hex")}`) + L;
    const sPlusL = Buffer.concat([
      good.subarray(0, 32),
      Buffer.from(s.toString(16).padStart(64, "0"), "hex").reverse(),
    ]);
    const cases: [string, Buffer, Buffer, string, boolean][] = [
      ["the unit's signature", good, data, unit.publicKey, true],
      ["one bit of the request changed", good, flipped(data, 40), unit.publicKey, false],
      ["one bit of R changed", flipped(good, 3), data, unit.publicKey, false],
      ["one bit of S changed", flipped(good, 40), data, unit.publicKey, false],
      ["S + L", sPlusL, data, unit.publicKey, false],
      ["another unit's key", good, data, other.publicKey, false],
      ["all zeros", Buffer.alloc(64), data, unit.publicKey, false],
    ];
    for (const [what, sig, msg, raw, expected] of cases) {
      expect([what, check("node", sig, msg, raw)]).toEqual([what, expected]);
      expect([what, check("libsodium", sig, msg, raw)]).toEqual([what, expected]);
    }
  });

  it.runIf(prebuilt)(
    "libsodium refuses a forged signature for a small-order key, and so does the fleet",
    () => {
      // The neutral point as the key, R the neutral point and S = 0: [S]B = R + [k]A for any request.
      const neutral = Buffer.alloc(32);
      neutral[0] = 1;
      const raw = neutral.toString("base64url");
      const forged = Buffer.concat([neutral, Buffer.alloc(32)]);
      expect(check("libsodium", forged, data, raw)).toBe(false);
      const headers = {
        "x-vendd-key": raw,
        "x-vendd-timestamp": String(NOW),
        "x-vendd-nonce": "n".repeat(22),
        "x-vendd-signature": forged.toString("base64url"),
      };
      expect(verifyRequest("POST", PATH, headers, '{"unitId":"vm-1"}', NOW)).toMatchObject({
        ok: false,
        code: "signature",
      });
    },
  );
});
