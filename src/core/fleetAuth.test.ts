import { describe, expect, it } from "vitest";
import { generateUnitKey, MAX_SKEW_MS, signRequest, verifyRequest, verifyRequestAsync } from "./fleetAuth.js";

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
