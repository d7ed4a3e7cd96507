import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

const VAT = "x-service-merchant-vat-number";
const NAME = "x-service-client-system-name";
const VERSION = "x-service-client-system-version";

describe("V10 authentication and required headers (pos-v10 §2, §3)", () => {
  let kit: V10Kit;
  let posId: string;
  beforeAll(async () => {
    kit = await V10Kit.start();
    posId = (await kit.createPos()).posId;
  });
  afterAll(() => kit.close());

  const path = () => `/v10/pointofsales/${posId}`;

  it("401 without a body for a missing, malformed or forged token", async () => {
    // Forged: one signature character changed, well before the end (the last base64url character carries
    // bits the decoder may ignore, and "xx" could be what was there).
    const at = kit.token.length - 10;
    const flipped = kit.token[at] === "A" ? "B" : "A";
    const forged = `${kit.token.slice(0, at)}${flipped}${kit.token.slice(at + 1)}`;
    for (const token of [null, "nonsense", forged]) {
      const r = await kit.call("GET", path(), { token });
      expect(r.status).toBe(401);
      expect(r.body).toBeUndefined();
    }
  });

  it("401 once the token expired (3700 s of emulator time)", async () => {
    const token = await kit.fetchToken(kit.emu.info.v10.clientId, kit.emu.info.v10.clientSecret);
    kit.emu.clock.advance(3_701_000);
    expect((await kit.call("GET", path(), { token })).status).toBe(401);
    await kit.refreshToken();
    expect((await kit.call("GET", path())).status).toBe(200);
  });

  const cases: [string, string[], string][] = [
    ["missing VAT", [NAME, "n", VERSION, "1.0.0"], "1151"],
    ["missing name", [VAT, "DK12345678", VERSION, "1.0.0"], "1152"],
    ["missing version", [VAT, "DK12345678", NAME, "n"], "1153"],
    ["duplicated VAT", [VAT, "DK12345678", VAT, "DK12345678", NAME, "n", VERSION, "1.0.0"], "1155"],
    ["duplicated name", [VAT, "DK12345678", NAME, "n", NAME, "n", VERSION, "1.0.0"], "1156"],
    ["duplicated version", [VAT, "DK12345678", NAME, "n", VERSION, "1.0.0", VERSION, "1.0.0"], "1157"],
    ["invalid VAT", [VAT, "DK-12345678", NAME, "n", VERSION, "1.0.0"], "1159"],
    ["invalid name", [VAT, "DK12345678", NAME, "x".repeat(37), VERSION, "1.0.0"], "1160"],
    ["invalid version", [VAT, "DK12345678", NAME, "n", VERSION, "1.0"], "1161"],
  ];
  for (const [what, headers, code] of cases) {
    it(`${what} → 400 ${code}`, async () => {
      const r = await kit.call("GET", path(), { headers });
      expect(r.status).toBe(400);
      expect(r.code).toBe(code);
      expect(r.body).toMatchObject({ message: expect.any(String), correlationId: expect.any(String) });
    });
  }

  it("echoes CorrelationId in error bodies", async () => {
    const r = await kit.call("GET", path(), {
      headers: [NAME, "n", VERSION, "1.0.0", "CorrelationId", "abc-123"],
    });
    expect(r.body).toMatchObject({ code: "1151", correlationId: "abc-123" });
  });

  it("a malformed merchant_vat claim → 1182; a claim differing from the header → 1159", async () => {
    const { clientId, clientSecret } = kit.emu.info.v10;
    const bad = await kit.fetchToken(clientId, clientSecret, "DK123");
    expect((await kit.call("GET", path(), { token: bad })).code).toBe("1182");
    const other = await kit.fetchToken(clientId, clientSecret, "FI12345678");
    expect((await kit.call("GET", path(), { token: other })).code).toBe("1159");
    const same = await kit.fetchToken(clientId, clientSecret, "DK12345678");
    expect((await kit.call("GET", path(), { token: same })).status).toBe(200);
  });

  it("header names are case-insensitive", async () => {
    const r = await kit.call("GET", path(), {
      headers: [
        "X-Service-Merchant-Vat-Number",
        "DK12345678",
        "X-SERVICE-CLIENT-SYSTEM-NAME",
        "n",
        VERSION,
        "2.3.4",
      ],
    });
    expect(r.status).toBe(200);
  });
});
