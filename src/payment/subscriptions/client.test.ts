/**
 * The subscriptions client's transport against a scripted loopback server: retries only what the retry
 * policy allows (5xx with the same idempotency key; never a 4xx), renews the token after a 401, sleeps on the
 * injected clock (no real waits), and keeps secrets out of its errors.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../../core/clock.js";
import { SubscriptionsClient, SubscriptionsError } from "./client.js";

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const SECRET = "very-secret-client-secret";

describe("subscriptions client transport", () => {
  let server: Server;
  let base = "";
  const seen: Seen[] = [];
  let script: ((s: Seen) => { status: number; body?: unknown }) | null = null;
  let tokens = 0;
  const slept: number[] = [];
  const clock: Clock = {
    now: () => 1_800_000_000_000,
    setTimer: () => ({ cancel() {} }),
    sleep: async (ms) => {
      slept.push(ms);
    },
  };

  beforeEach(async () => {
    seen.length = 0;
    slept.length = 0;
    tokens = 0;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const s = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        };
        let out: { status: number; body?: unknown };
        if (s.path === "/token") {
          tokens++;
          out = { status: 200, body: { access_token: `t${tokens}`, token_type: "Bearer", expires_in: 3600 } };
        } else {
          seen.push(s);
          out = script ? script(s) : { status: 200, body: {} };
        }
        res.writeHead(out.status, { "content-type": "application/json" });
        res.end(out.body === undefined ? "" : JSON.stringify(out.body));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    script = null;
    await new Promise<void>((r) => server.close(() => r()));
  });

  const client = (baseUrl = base) =>
    new SubscriptionsClient({
      baseUrl,
      tokenUrl: `${base}/token`,
      clientId: "id",
      clientSecret: SECRET,
      providerId: "prov",
      clock,
      random: () => 0.5,
    });

  it("retries a 5xx POST with the same idempotency key, after a backoff on the clock", async () => {
    let n = 0;
    script = () =>
      ++n < 3
        ? { status: 503 }
        : { status: 201, body: { id: "a1", links: [{ rel: "mobile-pay", href: "https://x/l" }] } };
    const r = await client().createAgreement({
      amount: 9900,
      currency: "DKK",
      countryCode: "DK",
      plan: "Coffee",
      externalId: "m1",
      expirationMinutes: 60,
      links: { userRedirect: "https://f/r", success: "https://f/s", cancel: "https://f/c" },
    });
    expect(r).toEqual({ id: "a1", landingUrl: "https://x/l" });
    expect(seen).toHaveLength(3);
    const keys = new Set(seen.map((s) => s.headers["idempotency-key"]));
    expect(keys).toEqual(new Set(["agreement:m1"]));
    expect(slept).toHaveLength(2);
    expect(seen[0]?.path).toBe("/api/providers/prov/agreements");
    expect(JSON.parse(seen[0]?.body ?? "{}")).toMatchObject({
      amount: "99.00",
      frequency: 12,
      external_id: "m1",
    });
    expect(seen[0]?.headers.authorization).toBe("Bearer t1");
  });

  it("never retries a 4xx; the error names the status, not the secret", async () => {
    script = () => ({
      status: 400,
      body: { error: "BadRequest", error_description: { message: "bad amount" } },
    });
    const err = await client()
      .createCharges(
        [{ agreementId: "a", amount: 100, dueDate: "2026-01-02", externalId: "x", description: "d" }],
        "k",
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubscriptionsError);
    expect((err as SubscriptionsError).status).toBe(400);
    expect(String(err)).toContain("bad amount");
    expect(String(err)).not.toContain(SECRET);
    expect(seen).toHaveLength(1);
    expect(slept).toHaveLength(0);
  });

  it("fetches a new token after a 401, once", async () => {
    let n = 0;
    script = () => (++n === 1 ? { status: 401 } : { status: 200, body: { id: "a", status: "Accepted" } });
    const c = client();
    expect(await c.getAgreement("a")).toEqual({ id: "a", status: "Accepted" });
    expect(tokens).toBe(2);
    expect(seen.map((s) => s.headers.authorization)).toEqual(["Bearer t1", "Bearer t2"]);
    script = () => ({ status: 401 });
    await expect(c.getAgreement("a")).rejects.toThrow(/401/);
  });

  it("gives up after the policy's retries on a network failure", async () => {
    const c = client("http://127.0.0.1:1");
    const err = await c.captureOneOff("a", "o").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubscriptionsError);
    expect(String(err)).toMatch(/network/);
    expect(slept).toHaveLength(2);
  });
});
