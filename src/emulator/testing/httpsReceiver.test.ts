import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { type HttpsReceiver, hasOpenssl, startHttpsReceiver } from "./httpsReceiver.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: https receiver tests skipped");

describe.skipIf(skip)("startHttpsReceiver", () => {
  let rx: HttpsReceiver | undefined;
  afterEach(async () => {
    await rx?.close();
  });

  it("records requests over TLS trusted only through its CA, and answers the configured status", async () => {
    rx = await startHttpsReceiver();
    const trusted = new Agent({ connect: { ca: rx.ca } });
    const res = await request(`${rx.url}/cb?x=1`, {
      method: "POST",
      body: JSON.stringify({ a: 1 }),
      headers: { "content-type": "application/json", authorization: "Basic dTpw" },
      dispatcher: trusted,
    });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const got = await rx.waitFor((r) => r.path === "/cb?x=1");
    expect(got.json).toEqual({ a: 1 });
    expect(got.headers.authorization).toBe("Basic dTpw");

    rx.respondWith((_req, i) => (i === 1 ? 503 : 204));
    const second = await request(`${rx.url}/cb`, { method: "POST", body: "x", dispatcher: trusted });
    await second.body.dump();
    expect(second.statusCode).toBe(503);
    expect((await rx.waitForCount(2)).map((r) => r.status)).toEqual([200, 503]);

    await expect(request(`${rx.url}/cb`, { method: "POST", body: "x" })).rejects.toThrow();
    await trusted.destroy();
  });
});
