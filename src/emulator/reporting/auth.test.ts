import { createHash, createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReportingKit as Kit, REDIRECT_URI, type ReportingKit } from "./testkit.test-support.js";

/** The merchant OpenID Connect provider of transaction reporting (seed 002 "Authentication"), over HTTP. */
describe("reporting authentication: OpenID Connect hybrid flow with refresh tokens", () => {
  let kit: ReportingKit;
  beforeAll(async () => {
    kit = await Kit.start({ startTime: Date.parse("2026-11-24T10:00:00Z") });
  });
  afterAll(() => kit.close());

  it("serves the discovery document at the seed's address", async () => {
    const r = await kit.raw("GET", kit.emu.info.reporting.discoveryUrl);
    expect(r.status).toBe(200);
    const base = `${kit.origin}/merchant-authentication-openidconnect`;
    expect(r.body).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/connect/authorize`,
      token_endpoint: `${base}/connect/token`,
      jwks_uri: `${base}/.well-known/openid-configuration/jwks`,
      scopes_supported: ["openid", "transactionreporting", "offline_access"],
      response_types_supported: ["code id_token", "code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
    });
    expect((await kit.raw("GET", `${base}/.well-known/openid-configuration/jwks`)).body).toEqual({
      keys: [],
    });
    expect((await kit.raw("POST", kit.emu.info.reporting.discoveryUrl)).status).toBe(405);
  });

  it("authorize (hybrid) redirects with code, id_token (nonce, c_hash, HS256 with the client secret) and state", async () => {
    const a = await kit.authorize({});
    expect(a.status).toBe(302);
    expect(a.location.startsWith(`${REDIRECT_URI}#`)).toBe(true);
    const code = a.params.get("code") as string;
    const idToken = a.params.get("id_token") as string;
    expect(a.params.get("state")).toBe("af0ifjsldkj");
    const [h, p, s] = idToken.split(".") as [string, string, string];
    const sig = createHmac("sha256", kit.emu.info.reporting.clientSecret)
      .update(`${h}.${p}`)
      .digest("base64url");
    expect(s).toBe(sig);
    const claims = JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({
      sub: "DK12345678",
      aud: kit.emu.info.reporting.clientId,
      nonce: "n-0S6_WzA2Mj",
      c_hash: createHash("sha256").update(code).digest().subarray(0, 16).toString("base64url"),
    });
  });

  it("response_type code answers in the query; response_mode query is honoured", async () => {
    const a = await kit.authorize({ response_type: "code", nonce: "" });
    expect(a.location.startsWith(`${REDIRECT_URI}?`)).toBe(true);
    expect(a.params.get("code")).toMatch(/^[\w-]{43}$/);
    expect(a.params.has("id_token")).toBe(false);
  });

  it("authorize errors: unknown client and bad redirect_uri 400; the rest redirected with error", async () => {
    const bad = await kit.raw(
      "GET",
      `${kit.origin}/merchant-authentication-openidconnect/connect/authorize?client_id=nobody&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: "invalid_client" });
    expect((await kit.authorize({ redirect_uri: "not a url" })).status).toBe(400);
    const cases: [Record<string, string>, string][] = [
      [{ scope: "openid offline_access" }, "invalid_scope"],
      [{ scope: "openid transactionreporting payments" }, "invalid_scope"],
      [{ nonce: "" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ login_hint: "DK99999999" }, "access_denied"],
    ];
    for (const [params, error] of cases) {
      const a = await kit.authorize(params);
      expect(a.status).toBe(302);
      expect(a.params.get("error")).toBe(error);
      expect(a.params.get("state")).toBe("af0ifjsldkj");
    }
  });

  it("token: code → access, id and refresh tokens; the code is good once and for its redirect_uri only", async () => {
    const code = (await kit.authorize({})).params.get("code") as string;
    const wrongUri = await kit.token({
      grant_type: "authorization_code",
      code,
      redirect_uri: "https://other.example/cb",
    });
    expect(wrongUri.status).toBe(400);
    expect(wrongUri.body).toMatchObject({ error: "invalid_grant" });
    // The failed exchange used the code up (single use, RFC 6749 §4.1.2).
    const code2 = (await kit.authorize({})).params.get("code") as string;
    const ok = await kit.token({ grant_type: "authorization_code", code: code2, redirect_uri: REDIRECT_URI });
    expect(ok.status).toBe(200);
    expect(ok.headers["cache-control"]).toBe("no-store");
    expect(ok.body).toMatchObject({
      token_type: "Bearer",
      expires_in: 3600,
      scope: "openid transactionreporting offline_access",
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      id_token: expect.any(String),
    });
    const again = await kit.token({
      grant_type: "authorization_code",
      code: code2,
      redirect_uri: REDIRECT_URI,
    });
    expect(again.body).toMatchObject({ error: "invalid_grant" });
  });

  it("token errors: client authentication 401, grant type, body type 400", async () => {
    const code = (await kit.authorize({})).params.get("code") as string;
    const wrong = await kit.token(
      { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI },
      "wrong",
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: "invalid_client" });
    expect((await kit.token({ grant_type: "client_credentials" })).body).toMatchObject({
      error: "unsupported_grant_type",
    });
    const json = await kit.raw(
      "POST",
      `${kit.origin}/merchant-authentication-openidconnect/connect/token`,
      { "content-type": "application/json" },
      "{}",
    );
    expect(json.status).toBe(400);
    // Form-field client authentication works as well (client_secret_post).
    const code2 = (await kit.authorize({})).params.get("code") as string;
    const post = await kit.raw(
      "POST",
      `${kit.origin}/merchant-authentication-openidconnect/connect/token`,
      { "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams({
        grant_type: "authorization_code",
        code: code2,
        redirect_uri: REDIRECT_URI,
        client_id: kit.emu.info.reporting.clientId,
        client_secret: kit.emu.info.reporting.clientSecret,
      }).toString(),
    );
    expect(post.status).toBe(200);
  });

  it("without offline_access there is no refresh token", async () => {
    const code = (await kit.authorize({ scope: "openid transactionreporting" })).params.get("code") as string;
    const t = await kit.token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI });
    expect(t.status).toBe(200);
    expect((t.body as Record<string, unknown>).refresh_token).toBeUndefined();
  });

  it("an expired access token is refused 401; the refresh token gives new tokens once (rotation)", async () => {
    await kit.login();
    expect((await kit.get("/v1/paymentpoints")).status).toBe(200);
    kit.emu.clock.advance(3600_000);
    const stale = await kit.get("/v1/paymentpoints");
    expect(stale.status).toBe(401);
    expect(stale.body).toMatchObject({ error: "invalid_token" });
    const old = kit.tokens?.refresh_token as string;
    await kit.refresh();
    expect((await kit.get("/v1/paymentpoints")).status).toBe(200);
    const reuse = await kit.token({ grant_type: "refresh_token", refresh_token: old });
    expect(reuse.status).toBe(400);
    expect(reuse.body).toMatchObject({ error: "invalid_grant" });
    // Refresh tokens live 30 days.
    kit.emu.clock.advance(30 * 24 * 3600_000);
    const late = await kit.token({
      grant_type: "refresh_token",
      refresh_token: kit.tokens?.refresh_token as string,
    });
    expect(late.body).toMatchObject({ error: "invalid_grant" });
  });
});
