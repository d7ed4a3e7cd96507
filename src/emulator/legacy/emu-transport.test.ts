import { describe, expect, it } from "vitest";
import { createStandaloneLegacy, signedRequest } from "./harness.test-support.js";

const ORIGIN = "http://127.0.0.1:8080";
const IDS = { MerchantId: "POSDK99999", LocationId: "88888" };

describe("transport (pos-legacy §1-§3)", () => {
  it("returns null for paths that are not /API/V{dd}/…", async () => {
    const w = createStandaloneLegacy();
    for (const path of ["/v10/payments", "/API/payments", "/API/V8/RegisterPoS", "/api/v08/RegisterPoS"]) {
      const req = {
        ...signedRequest({
          origin: ORIGIN,
          apiKey: w.seed.apiKey,
          operation: "X",
          body: {},
          nowMs: w.clock.now(),
        }),
        path,
      };
      expect(await w.legacy.handle(req)).toBeNull();
    }
  });

  it("answers 401 with no body, before any logic, for a missing, wrong, stale or body-mismatched signature", async () => {
    const w = createStandaloneLegacy();
    const body = { ...IDS, Name: "x" };
    const good = signedRequest({
      origin: ORIGIN,
      apiKey: w.seed.apiKey,
      operation: "RegisterPoS",
      body,
      nowMs: w.clock.now(),
    });
    const noHeader = { ...good, headers: { host: "127.0.0.1:8080" } };
    const wrongKey = signedRequest({
      origin: ORIGIN,
      apiKey: "other",
      operation: "RegisterPoS",
      body,
      nowMs: w.clock.now(),
    });
    const stale = signedRequest({
      origin: ORIGIN,
      apiKey: w.seed.apiKey,
      operation: "RegisterPoS",
      body,
      nowMs: w.clock.now() - 301_000,
    });
    const tampered = { ...good, body: Buffer.from(JSON.stringify({ ...body, Name: "y" })) };
    const otherHost = { ...good, url: "http://127.0.0.1:9999/API/V08/RegisterPoS" };
    for (const req of [noHeader, wrongKey, stale, tampered, otherHost]) {
      expect(await w.legacy.handle(req)).toEqual({ status: 401 });
    }
    expect((await w.client.call("GetPosList", IDS)).body).toEqual({ Poses: [] });
    const skew = signedRequest({
      origin: ORIGIN,
      apiKey: w.seed.apiKey,
      operation: "RegisterPoS",
      body,
      nowMs: w.clock.now() + 299_000,
    });
    expect((await w.legacy.handle(skew))?.status).toBe(200);
  });

  it("accepts any V{dd} version and operation names case-insensitively; 404 unknown operation; 405 not POST", async () => {
    const w = createStandaloneLegacy();
    const sign = (operation: string, version = "V08", method = "POST") =>
      signedRequest({
        origin: ORIGIN,
        apiKey: w.seed.apiKey,
        operation,
        body: IDS,
        nowMs: w.clock.now(),
        version,
        method,
      });
    expect((await w.legacy.handle(sign("GetPosList", "V06")))?.status).toBe(200);
    expect((await w.legacy.handle(sign("getposlist", "V99")))?.status).toBe(200);
    expect(await w.legacy.handle(sign("NoSuchOperation"))).toEqual({ status: 404 });
    expect(await w.legacy.handle(sign("GetPosList", "V08", "GET"))).toEqual({
      status: 405,
      headers: { allow: "POST" },
    });
  });

  it("matches field names case-insensitively and answers with the seed's casing", async () => {
    const w = createStandaloneLegacy();
    expect(
      (
        await w.client.call("RegisterPoS", {
          merchantid: "POSDK99999",
          LOCATIONID: "88888",
          POSId: "p1",
          name: "n",
        })
      ).body,
    ).toEqual({ PoSId: "p1" });
    expect(
      (
        await w.client.call("ReadPoSAssignPoSUnitId", {
          MerchantId: "POSDK99999",
          LocationId: "88888",
          PosId: "p1",
        })
      ).body,
    ).toEqual({ PoSUnitId: "" });
  });

  it("refuses bad input with 400 StatusCode 10 and a precise text, without a state change", async () => {
    const w = createStandaloneLegacy();
    const cases: [unknown, string][] = [
      ["{not json", "not valid JSON"],
      ["", "empty"],
      ["[1,2]", "JSON object"],
      ["null", "JSON object"],
      [{ ...IDS, Name: 7 }, "Name must be a string"],
      [{ ...IDS }, "Name is required"],
      [{ ...IDS, Name: "" }, "Name must not be empty"],
      [{ ...IDS, Name: "x".repeat(101) }, "longer than 100"],
      [{ ...IDS, Name: "a", name: "b" }, "more than once"],
      [{ ...IDS, Name: "a", PoSId: 12 }, "PoSId must be a string"],
    ];
    for (const [body, text] of cases) {
      const res = await w.client.call("RegisterPoS", body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ StatusCode: 10, StatusText: expect.stringContaining(text) });
    }
    expect((await w.client.call("GetLocationList", { MerchantId: "POSDK99999" })).body).toMatchObject({
      Location: [{ NumberOfPoS: 0 }],
    });
  });

  it("an armed fault answers the chosen StatusCode once, then the operation works again", async () => {
    const w = createStandaloneLegacy();
    w.legacy.armFault("RegisterPoS", 10, 2);
    expect((await w.client.call("RegisterPoS", { ...IDS, Name: "n" })).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await w.client.call("RegisterPoS", { ...IDS, Name: "n" })).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await w.client.call("RegisterPoS", { ...IDS, Name: "n" })).status).toBe(200);
  });
});
