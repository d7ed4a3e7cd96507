import { afterEach, describe, expect, it } from "vitest";
import { hasOpenssl, startHttpsReceiver } from "../testing/httpsReceiver.js";
import { refuseUrl } from "./delivery.js";
import { DK_USER, o, SubsKit } from "./testkit.test-support.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: subscriptions callback delivery tests skipped");

describe("callback URL rule", () => {
  it("https only, ports 80 and 443; loopback any port only when allowed", () => {
    expect(refuseUrl("https://merchant.example/cb", false)).toBeNull();
    expect(refuseUrl("https://merchant.example:80/cb", false)).toBeNull();
    expect(refuseUrl("http://merchant.example/cb", true)).toMatch(/https/);
    expect(refuseUrl("https://merchant.example:8443/cb", true)).toMatch(/ports 80 and 443/);
    expect(refuseUrl("https://127.0.0.1:8443/cb", false)).toMatch(/ports 80 and 443/);
    expect(refuseUrl("https://127.0.0.1:8443/cb", true)).toBeNull();
    expect(refuseUrl("https://[::1]:8443/cb", true)).toBeNull();
  });
});

describe.skipIf(skip)("subscriptions: callback delivery (seed 000)", () => {
  let kit: SubsKit | undefined;
  afterEach(async () => {
    await kit?.close();
    kit = undefined;
  });

  interface Rec {
    id: number;
    url: string;
    attempts: number;
    status: string;
    nextAttemptAt: number | null;
    lastError: string | null;
  }

  async function records(k: SubsKit): Promise<Rec[]> {
    const b = o((await k.admin("GET", "callbacks")).body);
    return [...(b.delivered as Rec[]), ...(b.pending as Rec[]), ...(b.failed as Rec[])];
  }

  /** Polls the admin API (real ms, bounded) until a record satisfies `match`. */
  async function until(k: SubsKit, match: (r: Rec) => boolean): Promise<Rec> {
    for (let i = 0; i < 400; i++) {
      const hit = (await records(k)).find(match);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no callback record matched: ${JSON.stringify(await records(k))}`);
  }

  it("retries a non-2xx answer 8 times: 5 s after the first attempt, then doubling; then failed", async () => {
    kit = await SubsKit.start();
    const k = kit;
    k.rx.respondWith((req) => (req.path.startsWith("/agreement") ? 503 : 200));
    const id = String((await k.createAgreement()).id);
    await k.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER });
    const t0 = k.emu.clock.now();
    let rec = await until(k, (r) => r.attempts === 1 && r.nextAttemptAt !== null);
    expect(rec.nextAttemptAt).toBe(t0 + 5000);
    expect(rec.lastError).toBe("HTTP 503");
    k.advance(4999);
    expect((await until(k, (r) => r.id === rec.id)).attempts).toBe(1);
    const delays = [5, 10, 20, 40, 80, 160, 320, 640];
    for (let i = 0; i < delays.length; i++) {
      k.advance(i === 0 ? 1 : (delays[i] ?? 0) * 1000);
      rec = await until(
        k,
        (r) => r.id === rec.id && r.attempts === i + 2 && (r.nextAttemptAt !== null || r.status === "failed"),
      );
      if (i < delays.length - 1)
        expect(rec.nextAttemptAt).toBe(k.emu.clock.now() + (delays[i + 1] ?? 0) * 1000);
    }
    expect(rec.status).toBe("failed");
    expect(k.rx.received.filter((r) => r.path === "/agreement/success").length).toBe(9);
  });

  it("a retry that succeeds is delivered; the admin API lists delivered, pending and batched", async () => {
    kit = await SubsKit.start();
    const k = kit;
    k.rx.respondWith((_req, i) => (i < 2 ? 500 : 200));
    const id = String((await k.createAgreement()).id);
    await k.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER });
    await until(k, (r) => r.attempts === 1 && r.nextAttemptAt !== null);
    k.advance(5000);
    await until(k, (r) => r.attempts === 2 && r.nextAttemptAt !== null);
    k.advance(10_000);
    const rec = await until(k, (r) => r.status === "delivered");
    expect(rec.attempts).toBe(3);
    await k.useReceiver();
    await k.requestPayments([k.payment("00000000-0000-0000-0000-000000000003")]);
    k.advance(0);
    const b = o((await k.admin("GET", "callbacks")).body);
    expect((b.batched as unknown[]).length).toBe(1);
    expect(typeof b.nextBatchAt).toBe("number");
  });

  it("without the loopback option, a receiver on another port than 80/443 is refused", async () => {
    const rx = await startHttpsReceiver();
    kit = await SubsKit.start({ subscriptions: { callbackAllowLoopbackPorts: false } }, rx);
    const k = kit;
    const id = String((await k.createAgreement()).id);
    await k.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER });
    const rec = await until(k, (r) => r.status === "failed");
    expect(rec.lastError).toMatch(/ports 80 and 443/);
    expect(rx.received).toEqual([]);
  });

  it("OAuth 2.0 client credentials: the emulator gets a token from the merchant and sends it as Bearer", async () => {
    kit = await SubsKit.start();
    const k = kit;
    k.rx.respondWith((req) =>
      req.path === "/token"
        ? { status: 200, body: { access_token: "merchant-issued", expires_in: 600 } }
        : 200,
    );
    expect(
      (
        await k.api("PUT", "/auth/oauth2", {
          token_url: `${k.rx.url}/token`,
          client_id: "emu id",
          client_secret: "s:cret",
        })
      ).status,
    ).toBe(204);
    const id = String((await k.createAgreement()).id);
    await k.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER });
    const cb = await k.rx.waitFor((r) => r.path === "/agreement/success");
    expect(cb.headers.authorization).toBe("Bearer merchant-issued");
    const tok = k.rx.received.find((r) => r.path === "/token");
    expect(tok?.body).toBe("grant_type=client_credentials");
    expect(tok?.headers.authorization).toBe(`Basic ${Buffer.from("emu%20id:s%3Acret").toString("base64")}`);
    await k.api("PUT", "/auth/apikey", { api_key: "key-123" });
    const second = String((await k.createAgreement()).id);
    await k.sim(`agreements/${second}/reject`);
    const cb2 = await k.rx.waitFor((r) => r.path === "/agreement/cancel");
    expect(cb2.headers.authorization).toBe("key-123");
  });
});
