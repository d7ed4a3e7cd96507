import { describe, expect, it } from "vitest";
import { createVirtualClock } from "../clock.js";
import { createLedger } from "../ledger.js";
import { parseSeedFile } from "../seed.js";
import { HttpsCallbackClient } from "./https.js";
import { InvoiceService } from "./service.js";
import { toMinor } from "./validate.js";

describe("invoice and online-payment building blocks", () => {
  it("callback URLs: https only, ports 443/80 unless loopback ports are allowed explicitly", async () => {
    const strict = new HttpsCallbackClient();
    const relaxed = new HttpsCallbackClient({ allowLoopbackPorts: true });
    expect(strict.refuse("https://merchant.example/cb")).toBeNull();
    expect(strict.refuse("https://merchant.example:80/cb")).toBeNull();
    expect(strict.refuse("http://merchant.example/cb")).toBe("must use https");
    expect(strict.refuse("https://127.0.0.1:8443/cb")).toBe("must use port 443 or 80");
    expect(strict.refuse("https://u:p@merchant.example/cb")).toBe("must not carry credentials");
    expect(strict.refuse("not a url")).toBe("must be an absolute https URL");
    expect(relaxed.refuse("https://127.0.0.1:8443/cb")).toBeNull();
    expect(relaxed.refuse("https://localhost:8443/cb")).toBeNull();
    expect(relaxed.refuse("https://merchant.example:8443/cb")).toBe("must use port 443 or 80");
    await Promise.all([strict.close(), relaxed.close()]);
  });

  it("seeded users may carry an age (0 to 150) for minimumServiceUserAge", () => {
    const seed = parseSeedFile({ users: [{ phone: "+4520039915", features: ["creditCard"], age: 15 }] });
    expect(seed.users).toEqual([{ phone: "+4520039915", features: ["creditCard"], age: 15 }]);
    expect(parseSeedFile({ users: [{ phone: "+4520039916", features: [] }] }).users?.[0]).not.toHaveProperty(
      "age",
    );
    expect(() => parseSeedFile({ users: [{ phone: "+4520039915", features: [], age: 151 }] })).toThrow(/age/);
    expect(() => parseSeedFile({ users: [{ phone: "+4520039915", features: [], age: "15" }] })).toThrow(
      /age/,
    );
  });

  it("decimal amounts are read exactly to minor units", () => {
    expect(toMinor(125)).toBe(12500);
    expect(toMinor(0.1)).toBe(10);
    expect(toMinor(19.99)).toBe(1999);
    expect(toMinor(-2.5)).toBe(-250);
    expect(toMinor(1.005)).toBeNull();
    expect(toMinor(1e21)).toBeNull();
    expect(toMinor("1.00")).toBeNull();
  });

  it("accepts bearer tokens from a pluggable verifier, mapped to the merchant by VAT", async () => {
    const clock = createVirtualClock({ startTime: 0, tickMs: 0 });
    const https = new HttpsCallbackClient();
    const service = new InvoiceService({
      clock,
      ledger: createLedger(clock),
      findUser: () => undefined,
      https,
    });
    service.merchants.set("m1", {
      merchantId: "m1",
      vat: "DK1",
      name: "M",
      accessToken: "seeded",
      issuers: [],
      callback: null,
    });
    expect(service.merchantByToken("seeded")?.merchantId).toBe("m1");
    expect(service.merchantByToken("oidc-token")).toBeUndefined();
    service.acceptTokens((t) => (t === "oidc-token" ? "DK1" : null));
    expect(service.merchantByToken("oidc-token")?.merchantId).toBe("m1");
    expect(service.merchantByToken("other")).toBeUndefined();
    service.close();
    clock.stop();
    await https.close();
  });
});
