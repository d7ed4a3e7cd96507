import { describe, expect, it } from "vitest";
import { EmulatorInputError, parseSeedFile } from "../index.js";

describe("seed.subscriptions", () => {
  it("reads merchants with credentials and providers", () => {
    const seed = parseSeedFile({
      subscriptions: {
        merchants: [
          {
            clientId: "c",
            clientSecret: "s",
            merchantId: "m-1",
            vat: "FI12345678",
            gatewayClientId: "g",
            gatewayClientSecret: "gs",
            providers: [{ providerId: "p-1", name: "Brand A", status: "Pending" }, {}],
          },
        ],
      },
    });
    expect(seed.subscriptions).toEqual([
      {
        clientId: "c",
        clientSecret: "s",
        merchantId: "m-1",
        vat: "FI12345678",
        gatewayClientId: "g",
        gatewayClientSecret: "gs",
        providers: [{ providerId: "p-1", name: "Brand A", status: "Pending" }, {}],
      },
    ]);
    expect(parseSeedFile({}).subscriptions).toEqual([]);
  });

  it("refuses malformed entries with the path of the error", () => {
    expect(() => parseSeedFile({ subscriptions: [] })).toThrow(EmulatorInputError);
    expect(() => parseSeedFile({ subscriptions: { merchants: [{ clientId: "c" }] } })).toThrow(
      /merchants\[0\]\.clientSecret/,
    );
    expect(() =>
      parseSeedFile({
        subscriptions: { merchants: [{ clientId: "c", clientSecret: "s", providers: [{ status: "On" }] }] },
      }),
    ).toThrow(/providers\[0\]\.status/);
    expect(() =>
      parseSeedFile({
        subscriptions: { merchants: [{ clientId: "c", clientSecret: "s", vat: "12345678" }] },
      }),
    ).toThrow(/merchants\[0\]\.vat must be a VAT number/);
  });
});
